/**
 * The shell walkthroughs of the docs, run as written.
 *
 * Markers (HTML comments, invisible on the rendered page):
 * - `<!-- walkthrough: <name> -->`: the ```sh blocks that follow, up to the
 *   next walkthrough marker or `<!-- walkthrough end -->`, are one
 *   walkthrough, run in order in one shell session (variables and the
 *   working directory carry over from block to block, as in a terminal).
 * - `<!-- walkthrough skip: <reason> -->` right before a block: not run, for
 *   the reason given (every ```sh block of a page is either run or skipped so).
 * - `<!-- walkthrough wait -->` right before a block that only reads: run
 *   again until its output shows what the block says (at most `waitMs`), as a
 *   user runs it again when the docs say "within a few seconds".
 *
 * In a block, full-line comments right after a command are its output as the
 * docs print it: each must match a line of the output, in order (`…` stands
 * for any text); a comment before the first command, or after a blank line,
 * is prose. Each block runs with `set -e -o pipefail`: any failing command
 * fails it.
 */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

export interface DocBlock {
  readonly file: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly lang: string
  readonly text: string
  readonly walkthrough?: string
  readonly skip?: string
  readonly wait: boolean
  /** The ```json block right after it (nothing but blank lines between): the answer the docs show. */
  readonly answer?: string
}

const SHELL = new Set(['sh', 'bash', 'shell', 'console'])
export const isShell = (b: DocBlock) => SHELL.has(b.lang)

/** Every fenced block of a Markdown text, with the walkthrough markers that apply to it. */
export function docBlocks(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n')
  const out: DocBlock[] = []
  let walkthrough: string | undefined
  let pending: { skip?: string; wait: boolean; line: number } | undefined
  let prevEnd: number | undefined
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!
    const marker = /^\s*<!--\s*walkthrough(?::\s*(.*?)|\s+(skip|wait|end)(?::\s*(.*?))?)\s*-->\s*$/.exec(l)
    if (marker) {
      if (marker[1] !== undefined) {
        if (marker[1] === '') throw new Error(`${file}:${i + 1}: a walkthrough marker names the walkthrough`)
        walkthrough = marker[1]
      } else if (marker[2] === 'end') walkthrough = undefined
      else if (marker[2] === 'skip') {
        if (!marker[3]) throw new Error(`${file}:${i + 1}: a skip marker gives its reason (<!-- walkthrough skip: … -->)`)
        pending = { skip: marker[3], wait: pending?.wait ?? false, line: i + 1 }
      } else pending = { ...pending, wait: true, line: i + 1 }
      continue
    }
    const fence = /^(\s*)(```+)\s*([\w-]*)/.exec(l)
    if (fence) {
      const close = new RegExp(`^\\s*${fence[2]}\\s*$`)
      const body: string[] = []
      let j = i + 1
      for (; j < lines.length && !close.test(lines[j]!); j++) body.push(lines[j]!.slice(Math.min(fence[1]!.length, /^\s*/.exec(lines[j]!)![0].length)))
      if (j >= lines.length) throw new Error(`${file}:${i + 1}: a code block is not closed`)
      const lang = fence[3]!.toLowerCase()
      if (pending && !SHELL.has(lang)) throw new Error(`${file}:${pending.line}: a walkthrough marker is followed by a ${lang || 'plain'} block, not a shell block`)
      const prev = out.at(-1)
      if (lang === 'json' && prev !== undefined && prevEnd !== undefined && lines.slice(prevEnd + 1, i).every((x) => x.trim() === '')) out[out.length - 1] = { ...prev, answer: body.join('\n') }
      out.push({ file, line: i + 1, lang, text: body.join('\n'), ...(walkthrough !== undefined ? { walkthrough } : {}), ...(pending?.skip !== undefined ? { skip: pending.skip } : {}), wait: pending?.wait ?? false })
      prevEnd = j
      pending = undefined
      i = j
      continue
    }
    if (pending && l.trim() !== '') throw new Error(`${file}:${pending.line}: a walkthrough marker must come right before its block`)
  }
  if (pending) throw new Error(`${file}:${pending.line}: a walkthrough marker with no block after it`)
  return out
}

/** The output a block's comments say its commands print, in order. */
export function expectedOutput(block: string): string[] {
  const out: string[] = []
  let afterCommand = false
  for (const l of block.split('\n')) {
    if (l.trim() === '') afterCommand = false
    else if (/^\s*#/.test(l)) {
      if (afterCommand) out.push(l.replace(/^\s*#\s?/, '').trim())
    } else afterCommand = true
  }
  return out
}

/** The first expected line not found in `output` (in order; `…` is any text), or undefined when all are. */
export function missingOutput(expected: readonly string[], output: string): string | undefined {
  const lines = output.split('\n').map((l) => l.replace(/\r$/, '').trim())
  let at = 0
  for (const e of expected) {
    const re = new RegExp(`^${e.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
    const found = lines.findIndex((l, i) => i >= at && re.test(l))
    if (found < 0) return e
    at = found + 1
  }
  return undefined
}

/**
 * The stable parts of an answer the docs show as JSON (abbreviated with `…`):
 * each `"key": value` whose value is a number, a boolean, null or a string
 * without `…` or a `<placeholder>`, written compactly as a JSON answer has it.
 */
export function answerParts(json: string): string[] {
  const out: string[] = []
  for (const m of json.matchAll(/"([^"\\]+)":\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)(?=\s*[,}\]])/g)) {
    if (m[2]!.includes('…') || /<[^<>"]+>/.test(m[2]!)) continue // abbreviated, or a placeholder (`<id>`)
    out.push(`"${m[1]}":${m[2]}`)
  }
  return out
}

export interface BlockRun {
  readonly code: number | null
  /** stdout and stderr, as they came. */
  readonly output: string
}

/**
 * A shell session: each block is a bash script that starts from the
 * variables and working directory the previous one left (kept in `stateDir`).
 * `prefix` runs bash through another command (a network namespace).
 */
export function shellSession(opts: { cwd: string; env: Record<string, string>; stateDir: string; prefix?: readonly string[]; timeoutMs?: number }) {
  const state = join(opts.stateDir, 'state.sh')
  const pwd = join(opts.stateDir, 'state.pwd')
  let n = 0
  return {
    run(block: string): Promise<BlockRun> {
      const script = join(opts.stateDir, `block-${++n}.sh`)
      writeFileSync(
        script,
        [
          'set -e -o pipefail',
          `if [ -f '${state}' ]; then . '${state}'; fi`,
          `if [ -f '${pwd}' ]; then cd "$(cat '${pwd}')"; fi`,
          // what the block sets is kept for the next one (read-only variables cannot be set again)
          `trap 'export -p | grep -v "^declare -[a-zA-Z]*r" > '"'${state}'"'; pwd > '"'${pwd}'" EXIT`,
          'set -a',
          block,
          '',
        ].join('\n'),
      )
      const [cmd, ...args] = [...(opts.prefix ?? []), 'bash', script]
      return new Promise((resolve, reject) => {
        const child = spawn(cmd!, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
        let output = ''
        child.stdout.on('data', (d: Buffer) => (output += d.toString()))
        child.stderr.on('data', (d: Buffer) => (output += d.toString()))
        const timer = setTimeout(() => {
          output += `\n(the block ran for more than ${opts.timeoutMs ?? 180_000} ms: killed)`
          try {
            process.kill(-child.pid!, 'SIGKILL')
          } catch {}
        }, opts.timeoutMs ?? 180_000)
        child.on('error', reject)
        child.on('close', (code) => {
          clearTimeout(timer)
          resolve({ code, output })
        })
      })
    },
  }
}
