/**
 * The shell around configurable enrichments: reads their configuration files
 * (a directory, or the assets bucket's `enrichments/` prefix), downloads the
 * assets they name into a local cache (`s3://`, `http(s)://`, `file://`),
 * builds the steps, and with an update period checks the assets for a new
 * version in the background, swapping the rebuilt steps in without stopping.
 */
import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import type { Resolver } from '../core/iglu/resolver'
import { assetLocationProblem, assetsOf, buildEnrichments, loadEnrichmentConfigs, type ConfigFile } from '../core/enrich/enrichments/registry'
import type { AssetFiles, EnrichmentConfig } from '../core/enrich/enrichments/module'
import type { WebServices } from '../core/enrich/enrichments/http-get'
import type { LookupServices } from '../core/enrich/enrichments/lookups'
import { sharedLookupServices } from '../runtime/lookup-services'
import type { EventSpecContext } from '../core/enrich/enrichments/event-spec'
import type { Enrichment } from '../core/enrich/steps'
import { enrichmentFiles } from '../infra/enrichments'
import { sharedHttpGet } from './http-get'

/** Where enrichment configurations live in the assets bucket. */
export const ENRICHMENTS_PREFIX = enrichmentFiles.prefix

/** Stops enrich at start: a configuration or an asset is unusable. */
export class EnrichmentSetupError extends Error {
  override readonly name = 'EnrichmentSetupError'
}

/** The `*.json` files of a directory, in name order. */
export async function configsFromDir(dir: string): Promise<ConfigFile[]> {
  let names: string[]
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort()
  } catch (err) {
    throw new EnrichmentSetupError(`cannot read the enrichments directory ${dir}: ${(err as Error).message}`)
  }
  return Promise.all(names.map(async (n) => ({ source: join(dir, n), text: await readFile(join(dir, n), 'utf8') })))
}

/** The `*.json` objects under a bucket prefix, in key order. */
export async function configsFromBucket(s3: S3Client, bucket: string, prefix = ENRICHMENTS_PREFIX): Promise<ConfigFile[]> {
  const keys: string[] = []
  let token: string | undefined
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }))
    for (const o of page.Contents ?? []) if (o.Key?.endsWith('.json')) keys.push(o.Key)
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
  keys.sort()
  return Promise.all(keys.map(async (Key) => {
    const o = await s3.send(new GetObjectCommand({ Bucket: bucket, Key }))
    return { source: `s3://${bucket}/${Key}`, text: await o.Body!.transformToString('utf8') }
  }))
}

/** The `*.json` objects under a bucket prefix as the control plane shows them: file name, text and when stored. */
export async function storedEnrichments(s3: S3Client, bucket: string, prefix = ENRICHMENTS_PREFIX): Promise<{ file: string; text: string; modifiedAt?: string }[]> {
  const objects: { Key: string; modifiedAt?: string }[] = []
  let token: string | undefined
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }))
    for (const o of page.Contents ?? []) if (o.Key?.endsWith('.json')) objects.push({ Key: o.Key, ...(o.LastModified ? { modifiedAt: o.LastModified.toISOString() } : {}) })
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
  objects.sort((a, b) => (a.Key < b.Key ? -1 : 1))
  return Promise.all(objects.map(async ({ Key, modifiedAt }) => {
    const o = await s3.send(new GetObjectCommand({ Bucket: bucket, Key }))
    return { file: Key.slice(prefix.length), text: await o.Body!.transformToString('utf8'), ...(modifiedAt ? { modifiedAt } : {}) }
  }))
}

/**
 * Why an asset cannot be read, without downloading it: a HEAD (a GET whose
 * body is dropped when HEAD is not allowed) for `http(s)://`, HeadObject for
 * `s3://`, the file's size for `file://`; at most `timeoutMs`.
 */
export async function probeAsset(location: string, o: { s3?: S3Client; timeoutMs?: number; fetch?: typeof fetch } = {}): Promise<string | undefined> {
  const timeoutMs = o.timeoutMs ?? 5_000
  const signal = AbortSignal.timeout(timeoutMs)
  const f = o.fetch ?? fetch
  try {
    const u = new URL(location)
    if (u.protocol === 'file:') {
      const s = await stat(fileURLToPath(u))
      return s.isFile() && s.size > 0 ? undefined : 'not a non-empty file'
    }
    if (u.protocol === 's3:') {
      if (!o.s3) return 'no S3 client to read s3:// assets with'
      const h = await o.s3.send(new HeadObjectCommand({ Bucket: u.hostname, Key: decodeURIComponent(u.pathname.slice(1)) }), { abortSignal: signal })
      return h.ContentLength === 0 ? 'the object is empty' : undefined
    }
    let res = await f(location, { method: 'HEAD', signal })
    if (res.status === 405 || res.status === 501) {
      res = await f(location, { signal })
      await res.body?.cancel()
    }
    return res.ok ? undefined : `HTTP ${res.status}`
  } catch (err) {
    if (signal.aborted) return `no answer within ${timeoutMs / 1000} s`
    const e = err as Error & { cause?: { code?: string; message?: string }; $metadata?: { httpStatusCode?: number } }
    if (e.$metadata?.httpStatusCode === 404 || e.name === 'NotFound' || e.name === 'NoSuchKey') return 'not found'
    if (e.$metadata?.httpStatusCode === 403) return 'access denied'
    return e.cause?.code ?? e.cause?.message ?? e.message
  }
}

type Version = string

/** A downloaded asset: its local file and the version it was downloaded at. */
interface Cached {
  path: string
  version: Version
}

export interface AssetCacheOptions {
  /** Local directory for downloaded files (`/tmp/…` on Lambda). */
  readonly dir: string
  readonly s3?: S3Client
  readonly fetch?: typeof fetch
}

/** Downloads assets by location and tells whether a newer version exists. */
export class AssetCache implements AssetFiles {
  private readonly files = new Map<string, Cached>()
  private readonly fetchFn: typeof fetch
  constructor(private readonly o: AssetCacheOptions) {
    this.fetchFn = o.fetch ?? fetch
  }

  /** Refuses locations this deployment cannot read, with the reason. */
  static check(location: string): string | undefined {
    return assetLocationProblem(location)
  }

  path(location: string): string {
    const c = this.files.get(location)
    if (!c) throw new Error(`asset ${location} was not downloaded`)
    return c.path
  }

  private s3(): S3Client {
    if (!this.o.s3) throw new Error('no S3 client to read s3:// assets with')
    return this.o.s3
  }

  /** Downloads (or, for `file://`, checks) an asset; answers whether the local copy changed. */
  async download(location: string): Promise<boolean> {
    const u = new URL(location)
    const before = this.files.get(location)
    if (u.protocol === 'file:') {
      const path = fileURLToPath(u)
      const s = await stat(path)
      if (!s.isFile() || s.size === 0) throw new Error(`${path} is not a non-empty file`)
      const version = `${s.size}-${s.mtimeMs}`
      this.files.set(location, { path, version })
      return before?.version !== version
    }
    await mkdir(this.o.dir, { recursive: true })
    const id = createHash('sha256').update(location).digest('hex').slice(0, 16)
    const tmp = join(this.o.dir, `.${id}-${process.pid}-${Date.now()}.part`)
    let version: Version | undefined
    try {
      let body: Readable
      if (u.protocol === 's3:') {
        const o = await this.s3().send(new GetObjectCommand({ Bucket: u.hostname, Key: decodeURIComponent(u.pathname.slice(1)) }))
        version = o.ETag ?? o.LastModified?.toISOString()
        body = o.Body as Readable
      } else {
        const res = await this.fetchFn(location, { signal: AbortSignal.timeout(300_000) })
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`)
        version = res.headers.get('etag') ?? res.headers.get('last-modified') ?? undefined
        body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream)
      }
      await pipeline(body, createWriteStream(tmp))
      const size = (await stat(tmp)).size
      if (size === 0) throw new Error('the downloaded file is empty')
      version ??= `${size}`
      if (before && before.version === version) {
        await rm(tmp, { force: true })
        return false
      }
      // A new file for each version: steps built on the old one keep reading it until swapped out.
      const path = join(this.o.dir, `${id}-${createHash('sha256').update(version).digest('hex').slice(0, 8)}-${basename(u.pathname) || 'asset'}`)
      await rename(tmp, path)
      this.files.set(location, { path, version })
      return true
    } catch (err) {
      await rm(tmp, { force: true })
      throw new Error(`cannot download ${location}: ${(err as Error).message}`)
    }
  }
}

export interface EnrichmentSetup {
  readonly enrichments: Enrichment[]
  /** Stops the background refresh. */
  stop(): void
}

export interface SetupOptions {
  readonly resolver: Resolver
  readonly cache: AssetCache
  readonly legacyOrder: boolean
  /** `featureFlags.exitOnJsCompileError`. */
  readonly exitOnJsCompileError?: boolean
  /** This deployment's event specifications, for the event specification enrichment. */
  readonly eventSpecs?: EventSpecContext
  /** `assetsUpdatePeriod`: how often assets are checked for a new version; never when unset. */
  readonly updatePeriodMs?: number
  /** Receives rebuilt steps after an asset changed. */
  readonly onChange?: (enrichments: Enrichment[]) => void
  readonly log?: (line: string) => void
  /** The network for enrichments that read a web service (default: Node's HTTP client, pools shared by the process). */
  readonly web?: WebServices
  /** HTTP and SQL for the API request and SQL query enrichments; default: the process's shared connections. */
  readonly services?: LookupServices
}

/**
 * Validates the configurations, downloads their assets and builds the steps.
 * Any failure throws `EnrichmentSetupError` naming the file or asset and why.
 */
export async function setupEnrichments(files: readonly ConfigFile[], o: SetupOptions): Promise<EnrichmentSetup> {
  const log = o.log ?? (() => {})
  const loaded = await loadEnrichmentConfigs(files, o.resolver)
  if (!loaded.ok) throw new EnrichmentSetupError(`invalid enrichment configuration:\n  ${loaded.errors.join('\n  ')}`)
  const configs: EnrichmentConfig[] = loaded.configs
  const assets = assetsOf(configs)
  const refused = assets.map((a) => AssetCache.check(a.location)).filter((x): x is string => x !== undefined)
  if (refused.length > 0) throw new EnrichmentSetupError(`unsupported asset locations:\n  ${refused.join('\n  ')}`)
  await Promise.all(assets.map(async (a) => {
    try {
      await o.cache.download(a.location)
    } catch (err) {
      throw new EnrichmentSetupError(`${a.source}: ${(err as Error).message}`)
    }
  }))
  const web = o.web ?? { http: sharedHttpGet() }
  const build = () =>
    buildEnrichments(configs, {
      assets: o.cache,
      legacyOrder: o.legacyOrder,
      web,
      services: o.services ?? sharedLookupServices(),
      ...(o.exitOnJsCompileError === false ? { exitOnJsCompileError: false } : {}),
      ...(o.eventSpecs ? { eventSpecs: o.eventSpecs } : {}),
    })
  const built = await build()
  if (!built.ok) throw new EnrichmentSetupError(`cannot start the enrichments:\n  ${built.errors.join('\n  ')}`)
  for (const c of configs) log(`enrichment ${c.schema.name} enabled (${c.source})`)
  for (const s of loaded.skipped) log(`enrichment skipped, disabled: ${s}`)
  let timer: NodeJS.Timeout | undefined
  if (o.updatePeriodMs !== undefined && assets.length > 0) {
    let running = false
    timer = setInterval(() => {
      if (running) return
      running = true
      void (async () => {
        let changed = false
        for (const a of assets) {
          try {
            if (await o.cache.download(a.location)) changed = true
          } catch (err) {
            log(JSON.stringify({ level: 'WARN', message: `asset refresh failed, keeping the current copy: ${(err as Error).message}` }))
          }
        }
        if (!changed) return
        const next = await build()
        if (next.ok) {
          o.onChange?.(next.enrichments)
          log(JSON.stringify({ level: 'INFO', message: 'enrichment assets updated' }))
        } else log(JSON.stringify({ level: 'WARN', message: `updated assets are unusable, keeping the current ones: ${next.errors.join('; ')}` }))
      })().finally(() => (running = false))
    }, o.updatePeriodMs)
    timer.unref()
  }
  return { enrichments: built.enrichments, stop: () => clearInterval(timer) }
}

/**
 * Makes the bucket's `enrichments/` prefix hold exactly these configuration
 * files (what `npm start` does with `FLOE_ENRICHMENTS_DIR`, as a deployment
 * does on AWS). The enrich function reads them when it starts.
 */
export async function syncEnrichments(s3: S3Client, bucket: string, files: readonly ConfigFile[], prefix = ENRICHMENTS_PREFIX): Promise<string[]> {
  const keep = new Set(files.map((f) => `${prefix}${basename(f.source)}`))
  const existing: string[] = []
  let token: string | undefined
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }))
    for (const o of page.Contents ?? []) if (o.Key) existing.push(o.Key)
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
  for (const Key of existing) if (!keep.has(Key)) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key }))
  for (const f of files) {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${basename(f.source)}`, Body: f.text, ContentType: 'application/json' }))
  }
  return [...keep]
}
