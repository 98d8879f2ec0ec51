/**
 * `floe enrich --config <file>`: the file-based variant. Every file under
 * `input.dir` (recursively) is one Thrift collector payload; good, failed, bad
 * and pii records are written one per line to `output.*.file`, rotated into
 * `<file>.0001`, `<file>.0002`, … when `maxBytes` is set.
 */
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { clients } from '../aws/clients'
import { plural } from '../core/plural'
import { AssetCache, configsFromDir, EnrichmentSetupError, setupEnrichments } from '../aws/enrichments'
import { lookupServices } from '../runtime/lookup-services'
import { deferredTracker, noErrorTracker, type ErrorTracker } from '../aws/error-tracker'
import { noticeText, type FileOutput } from '../core/enrich/config'
import { loadConfig } from '../core/enrich/config-file'
import { Enricher } from '../core/enrich/enrich'
import { Metrics, MetricsReporter } from '../core/enrich/metrics'
import { countOutcome, enrichBatch, invalidLogLines } from '../core/enrich/runner'
import { ENRICH_PROCESSOR } from '../core/enrich/version'
import { resolverFromConfig } from '../core/iglu/resolver-config'
import { defaultResolverConfig } from '../runtime/default-resolver'
import { HttpRepository } from '../core/iglu/repositories'
import type { Resolver } from '../core/iglu/resolver'
import type { Command } from './command'
import { usageError, UsageError } from './command'
import { remoteAdapters } from '../core/enrich/adapters/remote'

const USAGE = 'enrich --config <file.hocon> [--enrichments <dir>] [--registry <registryUrl> [--apikey <key>]]'

/** A line-per-record file with size rotation; files are created new (never overwritten). */
export class RotatingFile {
  private fd: number | undefined
  private bytes = 0
  private index = 0
  readonly files: string[] = []

  constructor(private readonly spec: FileOutput) {}

  private open(): void {
    this.index++
    const name = this.spec.maxBytes === undefined ? this.spec.file : `${this.spec.file}.${String(this.index).padStart(4, '0')}`
    mkdirSync(dirname(resolve(name)), { recursive: true })
    if (existsSync(name)) throw new UsageError(`output file ${name} already exists; move it away first`)
    this.fd = openSync(name, 'wx')
    this.files.push(name)
    this.bytes = 0
  }

  write(line: string): void {
    const buf = Buffer.from(`${line}\n`, 'utf8')
    if (this.fd === undefined) this.open()
    else if (this.spec.maxBytes !== undefined && this.bytes > 0 && this.bytes + buf.length > this.spec.maxBytes) {
      closeSync(this.fd)
      this.open()
    }
    writeSync(this.fd!, buf)
    this.bytes += buf.length
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await listFiles(p)))
    else if (e.isFile()) out.push(p)
  }
  return out.sort()
}

/**
 * The resolver of the file variant: with `--registry`, a deployment's Iglu
 * server (`<url>/api`, the stack's `/registry-server`) is tried first, with
 * `--apikey` for its private schemas; then the default repositories.
 */
function fileResolver(env: NodeJS.ProcessEnv, registry: string | undefined, apikey: string | undefined): Resolver {
  const { config, extra, lookupTimeoutMs } = defaultResolverConfig({ env })
  if (registry) {
    const uri = registry.replace(/\/+$/, '')
    extra.unshift(new HttpRepository(uri.endsWith('/api') ? uri : `${uri}/api`, { name: 'Floe registry', priority: -1, apikey: apikey ?? null, vendorPrefixes: [''] }))
  }
  return resolverFromConfig(config, { extra, lookupTimeoutMs })
}

export interface EnrichRun {
  readonly out: (line: string) => void
  readonly env?: NodeJS.ProcessEnv
}

export async function runEnrich(args: readonly string[], run: EnrichRun): Promise<number> {
  const opts: Record<'config' | 'enrichments' | 'registry' | 'apikey', string | undefined> = { config: undefined, enrichments: undefined, registry: undefined, apikey: undefined }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const name = (['config', 'enrichments', 'registry', 'apikey'] as const).find((n) => a === `--${n}` || a.startsWith(`--${n}=`))
    if (!name) throw usageError(USAGE, `unexpected argument '${a}'`)
    const value = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i]
    if (value === undefined || value === '') throw usageError(USAGE, `--${name} needs a value`)
    opts[name] = value
  }
  const configPath = opts.config
  if (!configPath) throw usageError(USAGE, '--config is required')
  if (opts.apikey && !opts.registry) throw usageError(USAGE, '--apikey goes with --registry')
  const env = run.env ?? process.env
  const loaded = await loadConfig(configPath, env)
  if (!loaded.ok) throw new UsageError(`invalid configuration ${configPath}:\n  ${loaded.errors.join('\n  ')}`)
  const config = loaded.config
  if (config.variant !== 'file') throw new UsageError(`${configPath}: 'floe enrich' runs the file-based variant (input.type = FileSystem); the Kinesis variant runs as the enrich function of the stack`)
  for (const n of config.notices) run.out(`warning: ${noticeText(n)}`)
  const sentry = config.monitoring.sentry
  const errors: ErrorTracker = sentry
    ? deferredTracker(async () => (await import('../aws/sentry')).sentryTracker({ dsn: sentry.dsn, tags: sentry.tags, release: `${ENRICH_PROCESSOR.artifact}-${ENRICH_PROCESSOR.version}` }))
    : noErrorTracker
  const files = await listFiles(resolve(config.input.dir)).catch((err: Error) => {
    throw new UsageError(`cannot read input.dir ${config.input.dir}: ${err.message}`)
  })
  const resolver = fileResolver(env, opts.registry, opts.apikey)
  // the connections of the API request and SQL query enrichments, closed when the run ends
  const services = lookupServices()
  const enrichments = opts.enrichments === undefined ? undefined : await setupEnrichments(await configsFromDir(opts.enrichments), {
    resolver,
    services,
    cache: new AssetCache({ dir: join(tmpdir(), 'floe-assets'), s3: clients().s3 }),
    legacyOrder: config.featureFlags.legacyEnrichmentOrder,
    exitOnJsCompileError: config.featureFlags.exitOnJsCompileError,
    log: run.out,
  }).catch(async (err: Error) => {
    await services.close()
    throw err instanceof EnrichmentSetupError ? new UsageError(err.message) : err
  })
  const enricher = new Enricher({
    resolver,
    enrichments: enrichments?.enrichments,
    processor: ENRICH_PROCESSOR,
    atomicFieldsLimits: config.validation.atomicFieldsLimits,
    acceptInvalid: config.featureFlags.acceptInvalid,
    emitFailed: config.output.incomplete !== undefined,
    emitPii: config.output.pii !== undefined,
    maxJsonDepth: config.maxJsonDepth,
    remoteAdapters: remoteAdapters(config.remoteAdapters.configs),
    schemaOverrides: new Map(Object.entries(config.adaptersSchemas)),
  })
  const sinks = {
    good: new RotatingFile(config.output.good),
    bad: new RotatingFile(config.output.bad),
    incomplete: config.output.incomplete && new RotatingFile(config.output.incomplete),
    pii: config.output.pii && new RotatingFile(config.output.pii),
  }
  const metrics = new Metrics()
  const totals = new Metrics()
  const reporter = new MetricsReporter({ metrics, stdout: config.monitoring.metrics.stdout && { ...config.monitoring.metrics.stdout, write: run.out }, statsd: config.monitoring.metrics.statsd })
  const debug = /^debug$/i.test(env.FLOE_LOG_LEVEL ?? '')
  const started = Date.now()
  const chunk = 256
  try {
    for (let i = 0; i < files.length; i += chunk) {
      const slice = files.slice(i, i + chunk)
      const records = await Promise.all(slice.map((f) => readFile(f)))
      const outcomes = await enrichBatch(enricher, records, { concurrency: config.concurrency.enrich })
      for (const o of outcomes) {
        for (const out of o.outputs) sinks[out.kind]?.write(out.kind === 'bad' ? out.json : out.tsv)
        countOutcome(metrics, o)
        countOutcome(totals, o)
        if (debug) for (const l of invalidLogLines(o)) run.out(l)
      }
      const t = totals.peek().counters
      run.out(`enrich: ${Math.min(i + chunk, files.length)}/${plural(files.length, 'file')}, good ${t.good}, incomplete ${t.incomplete}, bad ${t.bad}`)
    }
  } catch (err) {
    // monitoring.sentry: what stopped the run is reported before it ends
    errors.capture(err)
    await errors.flush()
    throw err
  } finally {
    for (const s of Object.values(sinks)) s?.close()
    await reporter.stop()
    await services.close()
  }
  const t = totals.peek().counters
  const secs = (Date.now() - started) / 1000
  run.out(`enrich done: ${plural(t.raw, 'payload')} in ${secs.toFixed(1)} s → good ${t.good}, incomplete ${t.incomplete}, bad ${t.bad}, pii ${t.pii}, invalid_enriched ${t.invalid_enriched}`)
  for (const [k, s] of Object.entries(sinks)) if (s && s.files.length) run.out(`  ${k}: ${s.files.join(', ')}`)
  return 0
}

export const enrichCommand: Command = {
  name: 'enrich',
  usage: USAGE,
  summary: 'Enrich Thrift collector payload files (the file-based variant): good, failed, bad and pii records to files, with a progress line and a summary.',
  run: (args) => runEnrich(args, { out: (l) => process.stdout.write(`${l}\n`) }),
}
