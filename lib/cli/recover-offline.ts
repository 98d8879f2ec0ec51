/**
 * `floe recover --input <file or dir> --config <file> --output <dir>`: the
 * offline mode of snowplow-event-recovery, with no stack. Bad rows (one JSON
 * per line, `.gz` too) are recovered with an event-recovery configuration;
 * each recovered event is written as one Thrift collector payload file under
 * `<dir>/good/` (what `floe enrich`'s `input.dir` reads), each row that could
 * not be as a `recovery_error` bad row line under `<dir>/bad/`. Files are
 * written whole (under `<dir>/.tmp/`, then renamed into place), so a run
 * killed part-way leaves only complete files in good/ and bad/, and a run
 * again writes the same names (one file per input line).
 */
import { createReadStream } from 'node:fs'
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import { basename, join, relative, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { createGunzip } from 'node:zlib'
import { parseEventRecoveryConfig, type RecoveryConfig } from '../core/recover/event-recovery/config'
import { recoverLine } from '../core/recover/event-recovery/offline'
import { MAX_STEPS_BYTES } from '../core/recover/steps'
import { UsageError } from './command'

export interface OfflineOptions {
  readonly input: string
  readonly config: string
  readonly output: string
  readonly json: boolean
}

export interface OfflineReport {
  /** Bad rows read (non-empty lines). */
  rows: number
  /** Payload files in good/ (read back). */
  recovered: number
  /** recovery_error rows in bad/ (read back). */
  failed: number
  reasons: { reason: string; count: number }[]
  good: string
  bad: string
}

/** Reads and checks a configuration file (the 64 KiB limit, JSON, the recoveries schema). */
export async function readRecoveryConfig(file: string, flag = '--config'): Promise<RecoveryConfig> {
  let text: string
  try {
    const s = await stat(file)
    if (s.size > MAX_STEPS_BYTES) throw new UsageError(`${flag}: ${file} is larger than ${MAX_STEPS_BYTES} bytes`)
    text = await readFile(file, 'utf8')
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`${flag}: cannot read ${file}: ${(err as Error).message}`)
  }
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw new UsageError(`${flag}: ${file} is not JSON: ${(err as Error).message}`)
  }
  const c = parseEventRecoveryConfig(doc)
  if (!c.ok) throw new UsageError(`${flag}: ${file} is not a usable event-recovery configuration:\n  ${c.errors.join('\n  ')}`)
  return c.value
}

async function inputFiles(input: string): Promise<string[]> {
  const s = await stat(input).catch((err: Error) => {
    throw new UsageError(`--input: cannot read ${input}: ${err.message}`)
  })
  if (s.isFile()) return [input]
  const out: string[] = []
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) await walk(p)
      else if (e.isFile() && !e.name.startsWith('.')) out.push(p)
    }
  }
  await walk(input)
  return out.sort()
}

async function* linesOf(file: string): AsyncIterable<string> {
  const raw = createReadStream(file)
  const stream = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) yield line
}

/** Writes a file whole: under `<output>/.tmp/` first (never in good/, which enrich reads), then renamed into place. */
async function writeWhole(tmpDir: string, path: string, data: Uint8Array | string): Promise<void> {
  const tmp = join(tmpDir, `${basename(path)}.${process.pid}`)
  await writeFile(tmp, data)
  await rename(tmp, path)
}

export async function recoverOffline(o: OfflineOptions, runId = `offline-${Date.now()}`): Promise<OfflineReport> {
  const config = await readRecoveryConfig(o.config)
  const files = await inputFiles(o.input)
  const good = resolve(o.output, 'good')
  const bad = resolve(o.output, 'bad')
  await mkdir(good, { recursive: true })
  await mkdir(bad, { recursive: true })
  const tmpDir = resolve(o.output, '.tmp')
  await mkdir(tmpDir, { recursive: true })
  const root = files.length === 1 && files[0] === o.input ? undefined : o.input
  const written: string[] = []
  const badFiles: string[] = []
  const reasons = new Map<string, number>()
  let rows = 0
  for (const file of files) {
    const name = (root ? relative(root, file) : basename(file)).replace(/\.gz$/, '').replace(/[^A-Za-z0-9._-]/g, '_')
    const badLines: string[] = []
    let n = 0
    for await (const line of linesOf(file)) {
      n++
      if (line.trim() === '') continue
      rows++
      const r = recoverLine(line, config, runId, Date.now())
      if (r.ok) {
        const path = join(good, `${name}-${n}.thrift`)
        await writeWhole(tmpDir, path, r.payload)
        written.push(path)
      } else {
        badLines.push(r.badRow)
        reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1)
      }
    }
    if (badLines.length > 0) {
      const path = join(bad, `${name}.recovery_errors.jsonl`)
      await writeWhole(tmpDir, path, `${badLines.join('\n')}\n`)
      badFiles.push(path)
    }
  }
  // the counts, from what landed
  let recovered = 0
  for (const p of written) if ((await stat(p).catch(() => undefined))?.isFile()) recovered++
  let failed = 0
  for (const p of badFiles) failed += (await readFile(p, 'utf8')).split('\n').filter((l) => l !== '').length
  return { rows, recovered, failed, reasons: [...reasons].sort((a, b) => b[1] - a[1]).map(([reason, count]) => ({ reason, count })), good, bad }
}

/** Parses the offline mode's options; undefined when `--input` is not among them. */
export function parseOfflineArgs(args: readonly string[], usage: string): OfflineOptions | undefined {
  if (!args.some((a) => a === '--input' || a.startsWith('--input='))) return undefined
  const v: Record<string, string> = {}
  let json = false
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const eq = a.indexOf('=')
    const flag = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a
    if (flag === '--json') json = true
    else if (flag === '--input' || flag === '--config' || flag === '--output') {
      const value = eq > 0 ? a.slice(eq + 1) : args[++i]
      if (value === undefined || value === '') throw new UsageError(`${flag} needs a value\nUsage: floe ${usage}`)
      if (v[flag] !== undefined) throw new UsageError(`${flag} is given twice`)
      v[flag] = value
    } else throw new UsageError(`'${a}' does not go with --input (the offline mode takes --input, --config, --output and --json)\nUsage: floe ${usage}`)
  }
  for (const f of ['--config', '--output']) if (!v[f]) throw new UsageError(`the offline mode (--input) needs ${f}\nUsage: floe ${usage}`)
  return { input: v['--input']!, config: v['--config']!, output: v['--output']!, json }
}

export function offlineSummary(r: OfflineReport): string {
  const lines = [`Recovered ${r.recovered} of ${r.rows} bad rows: ${r.recovered} payload file(s) in ${r.good} · ${r.failed} recovery_error row(s) in ${r.bad}`]
  for (const x of r.reasons) lines.push(`  ${x.count} × ${x.reason}`)
  return `${lines.join('\n')}\n`
}
