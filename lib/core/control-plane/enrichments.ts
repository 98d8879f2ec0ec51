/**
 * The control plane's enrichments: Mini's upload (`POST /enrichments`, the
 * file replaces the stored one of the same name), and Floe's listing, showing,
 * disabling, enabling and removing of the stored files. Every change is
 * checked as part of the whole set enrich would read (`checkEnrichmentSet`)
 * before anything is stored: a set enrich could not start with is refused
 * with every reason, and nothing changes. Disabling or removing a file can
 * only take problems away; it is done, and the answer lists any problem the
 * remaining set still has.
 */
import { checkEnrichmentSet, type SetCheck } from '../enrich/enrichments/check'
import type { ConfigFile } from '../enrich/enrichments/registry'
import type { Resolver } from '../iglu/resolver'
import { isObject } from '../iglu/selfdesc'
import type { HttpRequest, HttpResponse } from '../../http/types'
import { json, text } from '../../http/types'
import { isMultipart, parseMultipart } from '../../http/multipart'

/** A configuration file enrich reads, as stored. */
export interface StoredEnrichment {
  /** The file name (under the assets bucket's `enrichments/` prefix). */
  readonly file: string
  readonly text: string
  /** When it was stored (ISO 8601), when known. */
  readonly modifiedAt?: string
}

export interface EnrichmentDeps {
  /** The stored files, in name order. */
  listEnrichments(): Promise<readonly StoredEnrichment[]>
  putEnrichment(file: string, text: string): Promise<void>
  deleteEnrichment(file: string): Promise<void>
  /** The resolver enrich validates configurations with. */
  enrichmentResolver(): Resolver
  /** Why an asset cannot be read (bounded in time, not downloaded whole), or undefined. */
  probeAsset(location: string): Promise<string | undefined>
  /** Runs `change` while no other change to the enrichments runs; undefined when one does. */
  exclusive<T>(change: () => Promise<T>): Promise<T | undefined>
  restart(services: readonly ['enrich']): Promise<void>
}

export const ENRICHMENT_LIMIT_BYTES = 1024 * 1024
/** Files in the set at most (each up to `ENRICHMENT_LIMIT_BYTES`). */
export const MAX_ENRICHMENT_FILES = 64

export const ENRICHMENT_FILENAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.json$/
const NOT_VALID = 'The enrichment configuration is not valid:'
const BUSY = 'another change to the enrichments is in progress; try again'

const bad = (message: string, status = 400) => text(status, `${message}\n`)

/** Parameters whose values are secrets: shown as `********`. */
const SECRET = /^(password|apiKey|salt|secret|token)$/i

/** A configuration document with its secrets masked. */
export function masked(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(masked)
  if (!isObject(v)) return v
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) out[k] = SECRET.test(k) && typeof x === 'string' && x !== '' ? '********' : masked(x)
  return out
}

/** What the list says of a stored file. */
export function describeEnrichment(f: StoredEnrichment) {
  let doc: unknown
  try {
    doc = JSON.parse(f.text)
  } catch {
    doc = undefined
  }
  const data = isObject(doc) && isObject(doc.data) ? doc.data : undefined
  const schema = isObject(doc) && typeof doc.schema === 'string' ? doc.schema : null
  const name = typeof data?.name === 'string' ? data.name : schema ? (/^iglu:[^/]+\/([^/]+)\//.exec(schema)?.[1] ?? null) : null
  return {
    file: f.file,
    name,
    schema,
    enabled: data !== undefined && data.enabled !== false,
    modifiedAt: f.modifiedAt ?? null,
    bytes: Buffer.byteLength(f.text),
    ...(data === undefined ? { problem: 'not a self-describing enrichment configuration' } : {}),
  }
}

const byFile = (a: { file: string }, b: { file: string }) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0)

/** The set enrich would read with `file` holding `text` (or removed, with undefined). */
function setWith(stored: readonly StoredEnrichment[], file: string, text: string | undefined): ConfigFile[] {
  const rest = stored.filter((f) => f.file !== file).map((f) => ({ file: f.file, text: f.text }))
  const all = text === undefined ? rest : [...rest, { file, text }]
  return all.sort(byFile).map((f) => ({ source: f.file, text: f.text }))
}

const checkSet = (deps: EnrichmentDeps, files: readonly ConfigFile[]): Promise<SetCheck> =>
  checkEnrichmentSet(files, { resolver: deps.enrichmentResolver(), probeAsset: (l) => deps.probeAsset(l) })

/** `data.enabled` set in a file's JSON, or why it cannot be. */
function withEnabled(textOf: string, enabled: boolean): { ok: true; text: string } | { ok: false; message: string } {
  let doc: unknown
  try {
    doc = JSON.parse(textOf)
  } catch (err) {
    return { ok: false, message: `the stored file is not valid JSON: ${(err as Error).message}` }
  }
  if (!isObject(doc) || !isObject(doc.data)) return { ok: false, message: 'the stored file is not a self-describing enrichment configuration {"schema", "data"}' }
  return { ok: true, text: `${JSON.stringify({ ...doc, data: { ...doc.data, enabled } }, null, 2)}\n` }
}

const remaining = (c: SetCheck) => (c.ok ? '' : `\nThe remaining enrichments still have problems enrich stops on:\n${c.errors.join('\n')}`)

/** `POST /control-plane/enrichments`: Mini's upload. */
export async function uploadEnrichment(deps: EnrichmentDeps, req: HttpRequest): Promise<HttpResponse> {
  if (!isMultipart(req.headers['content-type'])) return bad('send the enrichment as multipart/form-data with the file in the field enrichmentjson', 415)
  const parts = await parseMultipart(req.body, req.headers['content-type']!, { fileBytes: ENRICHMENT_LIMIT_BYTES, files: 1, fields: 4 })
  if (!parts.ok) return bad(parts.message, parts.status)
  const upload = parts.files.find((f) => f.field === 'enrichmentjson')
  if (!upload) return bad('missing file enrichmentjson')
  const file = upload.filename.split(/[\\/]/).pop() ?? ''
  if (!ENRICHMENT_FILENAME.test(file)) return bad(`the file name must end in .json and use only letters, digits, '.', '_' and '-' (got '${file.slice(0, 100)}')`)
  const content = upload.data.toString('utf8')
  try {
    JSON.parse(content)
  } catch (err) {
    return bad(`JSON is not valid: ${(err as Error).message}`)
  }
  const done = await deps.exclusive(async () => {
    const stored = await deps.listEnrichments()
    const files = setWith(stored, file, content)
    if (files.length > MAX_ENRICHMENT_FILES) return bad(`${NOT_VALID}\nenrich reads at most ${MAX_ENRICHMENT_FILES} enrichment files; remove one first`)
    const checked = await checkSet(deps, files)
    if (!checked.ok) return bad(`${NOT_VALID}\n${checked.errors.join('\n')}`)
    await deps.putEnrichment(file, content)
    await deps.restart(['enrich'])
    return text(200, 'uploaded successfully')
  })
  return done ?? bad(BUSY, 409)
}

/** `GET /control-plane/enrichments`: every stored file. */
export async function listEnrichments(deps: EnrichmentDeps): Promise<HttpResponse> {
  return json(200, [...(await deps.listEnrichments())].sort(byFile).map(describeEnrichment))
}

/**
 * `/control-plane/enrichments/{file}` (GET: the file, secrets masked; DELETE)
 * and `/control-plane/enrichments/{file}/disable|enable` (POST).
 */
export async function enrichmentItem(deps: EnrichmentDeps, req: HttpRequest, file: string, action: string | undefined): Promise<HttpResponse> {
  if (action !== undefined && action !== 'disable' && action !== 'enable') return bad(`404 page not found: /control-plane/enrichments/{file} has GET, DELETE, and POST …/disable and …/enable`, 404)
  const allowed = action === undefined ? ['GET', 'HEAD', 'DELETE'] : ['POST']
  if (!allowed.includes(req.method)) return bad(`Only ${allowed.filter((m) => m !== 'HEAD').join(' and ')} ${allowed.length > 2 ? 'are' : 'is'} supported`, 405)
  if (req.method === 'GET' || req.method === 'HEAD') {
    const found = (await deps.listEnrichments()).find((f) => f.file === file)
    if (!found) return bad(`no enrichment file named ${file}`, 404)
    let doc: unknown
    try {
      doc = JSON.parse(found.text)
    } catch {
      return text(200, found.text)
    }
    return json(200, masked(doc))
  }
  const done = await deps.exclusive(async () => {
    const stored = await deps.listEnrichments()
    const found = stored.find((f) => f.file === file)
    if (!found) return bad(`no enrichment file named ${file}`, 404)
    if (req.method === 'DELETE') {
      const after = await checkSet(deps, setWith(stored, file, undefined))
      await deps.deleteEnrichment(file)
      await deps.restart(['enrich'])
      return text(200, `removed successfully${remaining(after)}`)
    }
    const enable = action === 'enable'
    const next = withEnabled(found.text, enable)
    if (!next.ok) return bad(next.message, 409)
    const after = await checkSet(deps, setWith(stored, file, next.text))
    if (enable && !after.ok) return bad(`${NOT_VALID}\n${after.errors.join('\n')}`)
    await deps.putEnrichment(file, next.text)
    await deps.restart(['enrich'])
    return text(200, `${enable ? 'enabled' : 'disabled'} successfully${remaining(after)}`)
  })
  return done ?? bad(BUSY, 409)
}
