/**
 * Loading enrich's configuration: HOCON text or file (environment
 * substitutions such as `${?ACCEPT_LIMITED_USE_LICENSE}` resolved), then
 * `validateConfig`. The embedded default is used when no file is given.
 */
import parse from '@pushcorn/hocon-parser'
import { spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEFAULT_CONFIG_TEXT } from './config/default'
import { validateConfig, type ConfigResult } from './config'

export { CONFIG_ENV, CONFIG_JSON_ENV } from './function-config'

/** Parses HOCON text into a plain document; throws with the parser's message. */
export async function parseHocon(text: string): Promise<unknown> {
  return parse({ text, strict: true })
}

export type DocResult = { ok: true; doc: unknown } | { ok: false; errors: string[] }

/** The configuration document from a file, or the embedded default. */
export async function readConfigDocument(path?: string): Promise<DocResult> {
  let text = DEFAULT_CONFIG_TEXT
  if (path) {
    try {
      text = await readFile(path, 'utf8')
    } catch (err) {
      return { ok: false, errors: [`cannot read the configuration file ${path}: ${(err as Error).message}`] }
    }
  }
  try {
    return { ok: true, doc: await parseHocon(text) }
  } catch (err) {
    return { ok: false, errors: [`${path ?? 'the embedded configuration'} is not valid HOCON: ${(err as Error).message}`] }
  }
}

/** Reads and validates a configuration file (or the embedded default). */
export async function loadConfig(path?: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<ConfigResult> {
  const d = await readConfigDocument(path)
  return d.ok ? validateConfig(d.doc, { env }) : d
}

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')

/**
 * The configuration document, synchronously (for the infrastructure
 * declaration, which is read synchronously by the CDK app and the local
 * runtime): the HOCON parser runs in a child Node process.
 */
export function readConfigDocumentSync(path: string | undefined, env: NodeJS.ProcessEnv = process.env): DocResult {
  const script = `
    const parse = require('@pushcorn/hocon-parser')
    const fs = require('fs')
    const text = process.argv[1] ? fs.readFileSync(process.argv[1], 'utf8') : process.argv[2]
    parse({ text, strict: true }).then(
      (doc) => process.stdout.write(JSON.stringify({ ok: true, doc })),
      (err) => process.stdout.write(JSON.stringify({ ok: false, errors: [String(err && err.message || err)] })),
    )`
  const r = spawnSync(process.execPath, ['-e', script, path ?? '', DEFAULT_CONFIG_TEXT], { cwd: projectRoot, env, encoding: 'utf8' })
  if (r.status !== 0 || !r.stdout) return { ok: false, errors: [`cannot read ${path ?? 'the embedded configuration'}: ${r.stderr || r.error?.message || 'the parser failed'}`] }
  const out = JSON.parse(r.stdout) as DocResult
  return out.ok ? out : { ok: false, errors: out.errors.map((e) => `${path ?? 'the embedded configuration'} is not valid HOCON: ${e}`) }
}
