import { existsSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { checkCompatibility } from '../core/compat/index'
import type { Command } from './command'
import { positionals, UsageError } from './command'

async function loadJson(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new UsageError(code === 'ENOENT' ? `file not found: ${path}` : `cannot read ${path} (${code ?? String(err)})`)
  }
  try {
    return JSON.parse(text) as unknown
  } catch (err) {
    throw new UsageError(`invalid JSON in ${path}: ${(err as Error).message}`)
  }
}

/** Resolver over a static registry directory: `<dir>/[schemas/]vendor/name/format/version`. */
function staticResolver(dir: string): (uri: string) => object | undefined {
  const base = existsSync(join(dir, 'schemas')) ? join(dir, 'schemas') : dir
  return (uri) => {
    const m = /^iglu:([a-zA-Z0-9-_.]+)\/([a-zA-Z0-9-_]+)\/([a-zA-Z0-9-_]+)\/([0-9]+-[0-9]+-[0-9]+)$/.exec(uri)
    if (!m) return undefined
    try {
      const v = JSON.parse(readFileSync(join(base, m[1], m[2], m[3], m[4]), 'utf8')) as unknown
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined
    } catch {
      return undefined
    }
  }
}

/**
 * `floe schema compat <a.json> <b.json> [--iglu <dir>]`: is every instance of A valid against B? Prints one
 * JSON line `{"result", "witness"?, "reasons"?, "ms"}` and exits 0; bad input files exit 2.
 */
export const schemaCompatCommand: Command = {
  name: 'schema compat',
  usage: 'schema compat <a.json> <b.json> [--iglu <dir>]',
  summary: 'Check that every instance valid against schema A is valid against schema B (JSON Schema draft-04).',
  async run(args: string[]): Promise<number> {
    const files: string[] = []
    let igluDir: string | undefined
    for (let i = 0; i < args.length; i++) {
      if (args[i] === '--iglu') {
        igluDir = args[++i]
        if (!igluDir) throw new UsageError('--iglu needs a directory')
      } else if (args[i].startsWith('--')) throw new UsageError(`unknown option ${args[i]}`)
      else files.push(args[i])
    }
    const [a, b] = await Promise.all(positionals(this, files, 2).map(loadJson))
    const start = performance.now()
    const r = checkCompatibility(a, b, igluDir ? { resolve: staticResolver(igluDir) } : {})
    const ms = Math.round((performance.now() - start) * 1000) / 1000
    process.stdout.write(JSON.stringify({ ...r, ms }) + '\n')
    return 0
  },
}
