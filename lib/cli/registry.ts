import { readdir, readFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import type { Command } from './command'
import { positionals, usageError, UsageError } from './command'
import { isUuid, isUuidV4 } from '../core/iglu/apikeys'
import { plural } from '../core/plural'
import { compareSchemaKeys, parseSchemaPath, toIgluUri, toSchemaPath, type SchemaKey } from '../core/iglu/keys'
import type { LintCheck } from '../core/iglu/lint'
// Only the option parsing here: the AWS SDK (`./target`, `./credentials`) is loaded when a command names a deployment.
import { takeTargetOptions, TARGET_USAGE } from './target-options'

/** How a registry command names its registry: a URL argument, or the deployment of `--stack`. */
const REGISTRY = '(<registryUrl> | --stack <name> [--region <region>] [--profile <profile>])'

/**
 * The registry URL and the positional arguments around it. `expected` are the
 * positional arguments with `<registryUrl>` among them (optional ones last,
 * in brackets); with `--stack <name>` the URL is the deployment's (its
 * `ApiUrl` output) and is not given.
 */
async function registryTarget(command: Command, args: readonly string[], expected: readonly string[]): Promise<{ url: string; rest: string[]; opts: Map<string, string | true> }> {
  const { target, rest: others } = takeTargetOptions(args, command.usage)
  const { positional, opts } = flags(others)
  const names = target.stack === undefined ? expected : expected.filter((e) => e !== '<registryUrl>')
  const min = names.filter((n) => !n.startsWith('[')).length
  if (positional.length < min || positional.length > names.length) throw usageError(command.usage, `expected ${names.join(' ')}`)
  if (target.stack === undefined) {
    const at = expected.indexOf('<registryUrl>')
    return { url: positional[at]!, rest: positional.filter((_, i) => i !== at), opts }
  }
  const { stackTarget } = await import('./target')
  const t = await stackTarget({ ...target, stack: target.stack })
  t.ddb.destroy()
  t.kinesis.destroy()
  return { url: t.apiUrl!, rest: positional, opts }
}

/**
 * The registry API base for a stack URL, a `/registry-server` URL or an `/api`
 * URL; `http://` is assumed when no scheme is given.
 */
export function registryApiBase(url: string): string {
  let u = url.trim().replace(/\/+$/, '')
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(u)) u = `http://${u}`
  if (/\/registry-server\/api$/.test(u) || /\/api$/.test(u)) return u
  if (/\/registry-server$/.test(u)) return `${u}/api`
  return `${u}/registry-server/api`
}

function flags(args: string[]): { positional: string[]; opts: Map<string, string | true> } {
  const positional: string[] = []
  const opts = new Map<string, string | true>()
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a.startsWith('--')) {
      const eq = a.indexOf('=')
      if (eq > 0) opts.set(a.slice(2, eq), a.slice(eq + 1))
      else if (['concurrency', 'skip'].includes(a.slice(2)) && i + 1 < args.length) opts.set(a.slice(2), args[++i]!)
      else opts.set(a.slice(2), true)
    } else positional.push(a)
  }
  return { positional, opts }
}

async function callJson(method: string, url: string, apikey: string | undefined, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(apikey ? { apikey } : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await res.text()
  let parsed: unknown = undefined
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, body: parsed, text }
}

const messageOf = (r: { body: any; text: string; status: number }) =>
  (r.body && typeof r.body.message === 'string' ? r.body.message : r.text) || `HTTP ${r.status}`

/** Reports a registry call that did not succeed; the exit code. */
function callFailed(what: string, r: { body: any; text: string; status: number }): number {
  process.stderr.write(`${what} failed: HTTP ${r.status}: ${messageOf(r)}\n`)
  return 1
}

/** Files in static layout `{vendor}/{name}/{format}/{version}` under a directory. */
export async function findSchemaFiles(dir: string, format = 'jsonschema'): Promise<{ key: SchemaKey; file: string }[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const out: { key: SchemaKey; file: string }[] = []
  for (const e of entries) {
    if (!e.isFile()) continue
    const file = join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)
    const parts = relative(dir, file).split(sep)
    if (parts.length < 4) continue
    const k = parseSchemaPath(parts.slice(-4).join('/'))
    if (k.ok && k.value.format === format) out.push({ key: k.value, file })
  }
  return out.sort((a, b) => compareSchemaKeys(a.key, b.key))
}

/** Stable JSON text with sorted keys, to compare documents. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(v)
}

function strip(doc: unknown): unknown {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return doc
  const { $supersededBy: _a, ...rest } = doc as Record<string, unknown>
  return rest
}

/** The last line of a push: `1 schema: 1 created, 0 updated, 0 unchanged, 0 failed`. */
export function pushSummary(counts: { readonly created: number; readonly updated: number; readonly unchanged: number; readonly failed: number }): string {
  const total = counts.created + counts.updated + counts.unchanged + counts.failed
  return `${plural(total, 'schema')}: ${counts.created} created, ${counts.updated} updated, ${counts.unchanged} unchanged, ${counts.failed} failed`
}

/** The last line of a lint: `1 schema linted: 1 passed, 0 failed, 1 warning`. */
export function lintSummary(total: number, failed: number, warnings: number): string {
  return `${plural(total, 'schema')} linted: ${total - failed} passed, ${failed} failed, ${plural(warnings, 'warning')}`
}

export const registryKeygenCommand: Command = {
  name: 'registry keygen',
  usage: `registry keygen <vendorPrefix> ${REGISTRY} <superApiKey>`,
  summary: 'Create a read/write API key pair bound to a vendor prefix.',
  async run(args) {
    const { url, rest } = await registryTarget(this, args, ['<vendorPrefix>', '<registryUrl>', '<superApiKey>'])
    const [prefix, key] = rest as [string, string]
    if (!isUuid(key)) throw new UsageError('the super API key must be a UUID')
    const r = await callJson('POST', `${registryApiBase(url)}/auth/keygen`, key, { vendorPrefix: prefix })
    if (r.status !== 200 && r.status !== 201) return callFailed('keygen', r)
    process.stdout.write(`Read key:  ${r.body.read}\nWrite key: ${r.body.write}\n`)
    return 0
  },
}

export const registryPushCommand: Command = {
  name: 'registry push',
  usage: `registry push <schemaDir> ${REGISTRY} <apiKey> [--public] [--concurrency N]`,
  summary: 'Upload every schema of a static-layout directory (jsonschema only), versions of a schema in order.',
  async run(args) {
    const { url, rest, opts } = await registryTarget(this, args, ['<schemaDir>', '<registryUrl>', '<apiKey>'])
    const [dir, key] = rest as [string, string]
    if (!isUuid(key)) throw new UsageError('the API key must be a UUID')
    const isPublic = opts.get('public') === true || opts.get('public') === 'true'
    const concurrency = Math.max(1, Number(opts.get('concurrency') ?? 8) || 8)
    const api = registryApiBase(url)
    const files = await findSchemaFiles(dir)
    if (files.length === 0) {
      process.stderr.write(`no schemas found under ${dir} (expected {vendor}/{name}/jsonschema/{version} files)\n`)
      return 1
    }
    // Versions of one vendor/name must arrive in order; different schemas go in parallel.
    const groups = new Map<string, typeof files>()
    for (const f of files) {
      const g = `${f.key.vendor}/${f.key.name}`
      groups.set(g, [...(groups.get(g) ?? []), f])
    }
    const counts = { created: 0, updated: 0, unchanged: 0, failed: 0 }
    let done = 0
    const total = files.length
    if (total > 1) process.stderr.write(`pushing ${plural(total, 'schema')} to ${api} (${Math.min(concurrency, groups.size)} at a time, versions of a schema in order)…\n`)
    const width = String(total).length
    const report = (status: string, k: SchemaKey, detail = '') => {
      done++
      process.stdout.write(`[${String(done).padStart(width)}/${total}] ${status.padEnd(9)} ${toIgluUri(k)}${detail ? `: ${detail}` : ''}\n`)
    }
    const pushOne = async ({ key: k, file }: (typeof files)[number]) => {
      let doc: unknown
      try {
        doc = JSON.parse(await readFile(file, 'utf8'))
      } catch (err) {
        counts.failed++
        return report('FAILED', k, `cannot read ${file}: ${(err as Error).message}`)
      }
      const target = `${api}/schemas/${toSchemaPath(k)}`
      try {
        const r = await callJson('PUT', `${target}?isPublic=${isPublic}`, key, doc)
        if (r.status === 201) {
          counts.created++
          return report('created', k)
        }
        if (r.status === 200) {
          counts.updated++
          return report('updated', k)
        }
        if (r.status === 409 && messageOf(r) === 'Schema already exists') {
          const existing = await callJson('GET', `${target}?repr=canonical`, key)
          if (existing.status === 200 && stable(strip(existing.body)) === stable(strip(doc))) {
            counts.unchanged++
            return report('unchanged', k)
          }
          counts.failed++
          return report('FAILED', k, 'a different schema with this version already exists')
        }
        counts.failed++
        const extra = r.body && Array.isArray(r.body.report)
          ? ` ${r.body.report.filter((m: { level: string }) => m.level === 'ERROR').map((m: { pointer: string; message: string }) => `[${m.pointer}] ${m.message}`).join('; ')}`
          : ''
        return report('FAILED', k, `HTTP ${r.status}: ${messageOf(r)}${extra}`)
      } catch (err) {
        counts.failed++
        return report('FAILED', k, (err as Error).message)
      }
    }
    const queue = [...groups.values()]
    await Promise.all(
      Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
        for (let g = queue.shift(); g; g = queue.shift()) for (const f of g) await pushOne(f)
      }),
    )
    process.stdout.write(`${pushSummary(counts)}\n`)
    return counts.failed > 0 ? 1 : 0
  },
}

export const registryLintCommand: Command = {
  name: 'registry lint',
  usage: 'registry lint <schemaDir> [--skip check,check] [--quiet]',
  summary: 'Lint every schema of a static-layout directory; fails when any has an ERROR.',
  async run(args) {
    const { positional, opts } = flags(args)
    const [dir] = positionals(this, positional, 1) as [string]
    const skipRaw = opts.get('skip')
    // the linter (and its JSON Schema validator) is loaded by this command only
    const { hasErrors, lint, SKIPPABLE_CHECKS } = await import('../core/iglu/lint')
    const skip = typeof skipRaw === 'string' ? (skipRaw.split(',').map((s) => s.trim()).filter(Boolean) as LintCheck[]) : []
    const unknown = skip.filter((s) => !SKIPPABLE_CHECKS.includes(s))
    if (unknown.length > 0) throw new UsageError(`cannot skip ${unknown.join(', ')}; skippable checks: ${SKIPPABLE_CHECKS.join(', ')}`)
    const quiet = opts.get('quiet') === true
    const files = await findSchemaFiles(dir)
    if (files.length === 0) {
      process.stderr.write(`no schemas found under ${dir} (expected {vendor}/{name}/jsonschema/{version} files)\n`)
      return 1
    }
    let failed = 0
    let warnings = 0
    for (const { key, file } of files) {
      let doc: unknown
      const lines: string[] = []
      let error = false
      try {
        doc = JSON.parse(await readFile(file, 'utf8'))
        const messages = lint(doc, { skip })
        const self = (doc as { self?: Record<string, string> }).self
        if (self && `iglu:${self.vendor}/${self.name}/${self.format}/${self.version}` !== toIgluUri(key)) {
          lines.push(`  ERROR   [/self] self does not match the file path ${toSchemaPath(key)}`)
          error = true
        }
        error ||= hasErrors(messages)
        for (const m of messages) {
          if (m.level === 'WARNING') warnings++
          if (quiet && m.level !== 'ERROR') continue
          lines.push(`  ${m.level.padEnd(7)} [${m.pointer}] ${m.message}`)
        }
      } catch (err) {
        lines.push(`  ERROR   cannot parse: ${(err as Error).message}`)
        error = true
      }
      if (error) failed++
      if (lines.length > 0 || !quiet) process.stdout.write(`${error ? 'FAILED' : 'OK    '} ${file}\n${lines.map((l) => `${l}\n`).join('')}`)
    }
    process.stdout.write(`${lintSummary(files.length, failed, warnings)}\n`)
    return failed > 0 ? 1 : 0
  },
}

export const registrySuperKeyCommand: Command = {
  name: 'registry superkey',
  usage: `registry superkey ${REGISTRY} <currentSuperApiKey> [<newSuperApiKey>]  |  registry superkey --reset ${TARGET_USAGE}`,
  summary:
    'Change the registry super API key (a new UUID v4 is generated and printed when none is given). With --reset, without the current key: a new key is generated, stored hashed in the settings table with your access to it (the local stack, or --stack with your AWS credentials) and printed once.',
  async run(args) {
    if (args.includes('--reset')) {
      const usage = `registry superkey --reset ${TARGET_USAGE}`
      const { target, rest } = takeTargetOptions(args.filter((a) => a !== '--reset'), usage)
      if (rest.length > 0) throw usageError(usage, `unexpected ${rest.join(' ')}`)
      const { resetSuperKeyCommand } = await import('./credentials')
      return resetSuperKeyCommand(target)
    }
    const { url, rest } = await registryTarget(this, args, ['<registryUrl>', '<currentSuperApiKey>', '[<newSuperApiKey>]'])
    const [current, given] = rest as [string, string | undefined]
    const next = given ?? crypto.randomUUID()
    if (!isUuidV4(next)) throw new UsageError('the new super API key must be a UUID v4')
    const r = await callJson('PUT', `${registryApiBase(url)}/auth/superkey`, current, { superApiKey: next })
    if (r.status !== 200) return callFailed('changing the super API key', r)
    process.stdout.write(given ? 'Super API key changed.\n' : `Super API key changed. New key (shown once): ${next}\n`)
    return 0
  },
}

/** igluctl's words for the same command (`igluctl server keygen`, `igluctl static push`), beside Floe's own. */
function igluctlAlias(name: string, target: Command, args: string): Command {
  const alias: Command = {
    name,
    usage: `${name} ${args}`,
    summary: `igluctl's form of 'floe ${target.name}'.`,
    run: (argv) => target.run.call(alias, argv),
  }
  return alias
}

export const registryServerKeygenCommand = igluctlAlias('registry server keygen', registryKeygenCommand, `<vendorPrefix> ${REGISTRY} <superApiKey>`)
export const registryStaticPushCommand = igluctlAlias('registry static push', registryPushCommand, `<schemaDir> ${REGISTRY} <apiKey> [--public] [--concurrency N]`)

export const registryCommands: readonly Command[] = [
  registryKeygenCommand, registryPushCommand, registryLintCommand, registrySuperKeyCommand, registryServerKeygenCommand, registryStaticPushCommand,
]
