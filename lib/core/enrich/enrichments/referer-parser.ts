/**
 * `referer_parser`: `refr_medium`, `refr_source` and `refr_term` from the
 * referrer URL, with the referer-parser database (`referers-latest.json`:
 * medium → source → `{domains, parameters?}`) named by `uri` + `database`,
 * plus the configuration's own `referrers` (same shape, they win over the
 * database's). A referrer on the page's host or an `internalDomains` host is
 * `internal`; one found nowhere is `unknown`.
 */
import { readFileSync } from 'node:fs'
import { F } from '../fields'
import { tsv } from '../convert'
import type { Enrichment } from '../steps'
import { parseUri, uriParts } from '../uri'
import { assetLocation, ConfigError, ORDER, type EnrichmentModule } from './module'

export interface RefererEntry {
  readonly medium: string
  readonly source: string
  /** Query parameters holding the search term (search engines). */
  readonly parameters: readonly string[] | null
}

/** What a referrer is: internal, unknown, or a known source (with the search term, when there is one). */
export type Referer = { medium: 'internal' | 'unknown' } | { medium: string; source: string; term: string | null }

export type RefererDatabase = ReadonlyMap<string, RefererEntry>

/** Reads the database's JSON shape (`{medium: {source: {domains, parameters?}}}`); throws `ConfigError` saying what is wrong. */
export function loadReferers(doc: unknown, where: string, into = new Map<string, RefererEntry>()): Map<string, RefererEntry> {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ConfigError(`${where} is not a referer database: expected an object of media`)
  for (const [medium, sources] of Object.entries(doc)) {
    if (typeof sources !== 'object' || sources === null || Array.isArray(sources)) throw new ConfigError(`${where}: medium ${JSON.stringify(medium)} is not an object of sources`)
    for (const [source, entry] of Object.entries(sources as object)) {
      const e = entry as { domains?: unknown; parameters?: unknown }
      if (typeof e !== 'object' || e === null || !Array.isArray(e.domains) || !e.domains.every((d) => typeof d === 'string')) {
        throw new ConfigError(`${where}: ${medium}.${source} has no list of domains`)
      }
      if (e.parameters !== undefined && (!Array.isArray(e.parameters) || !e.parameters.every((p) => typeof p === 'string'))) {
        throw new ConfigError(`${where}: ${medium}.${source}.parameters is not a list of names`)
      }
      const value: RefererEntry = { medium, source, parameters: (e.parameters as string[] | undefined) ?? null }
      for (const d of e.domains as string[]) into.set(d, value)
    }
  }
  return into
}

/** Percent-decoding that keeps malformed sequences as they are (UTF-8). */
function decode(s: string, plus: boolean): string {
  const t = plus ? s.replace(/\+/g, ' ') : s
  if (!t.includes('%')) return t
  try {
    return decodeURIComponent(t)
  } catch {
    return t.replace(/(?:%[0-9A-Fa-f]{2})+/g, (seq) => {
      try {
        return decodeURIComponent(seq)
      } catch {
        return seq
      }
    })
  }
}

/** The first query parameter (separated by `&` or `;`) named in `names`, form-decoded; a name without `=` has no value. */
export function searchTerm(rawQuery: string | null, names: readonly string[]): string | null {
  if (rawQuery === null) return null
  for (const pair of rawQuery.split(/[&;]/)) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const name = decode(eq < 0 ? pair : pair.slice(0, eq), true).trim()
    if (names.includes(name)) return eq < 0 ? null : decode(pair.slice(eq + 1), true)
  }
  return null
}

/** The entry of a host and path: host + path, host + first path segment, then the same for each parent domain; then the hosts alone. */
export function lookupReferer(db: RefererDatabase, host: string, path: string): RefererEntry | undefined {
  const segment = path.split('/')[1]
  for (let h: string | undefined = host; h !== undefined; h = parent(h)) {
    const hit = db.get(h + path) ?? (segment !== undefined ? db.get(`${h}/${segment}`) : undefined)
    if (hit) return hit
  }
  for (let h: string | undefined = host; h !== undefined; h = parent(h)) {
    const hit = db.get(h)
    if (hit) return hit
  }
  return undefined
}

const parent = (h: string): string | undefined => {
  const i = h.indexOf('.')
  return i < 0 ? undefined : h.slice(i + 1)
}

/** What a referrer URL (its scheme, host, decoded path and raw query) is, seen from a page on `pageHost`; undefined for a URL that is not http(s) or android-app. */
export function parseReferer(db: RefererDatabase, internal: readonly string[], u: { scheme: string | null; host: string | null; path: string | null; query: string | null }, pageHost: string | null): Referer | undefined {
  if (u.host === null || (u.scheme !== 'http' && u.scheme !== 'https' && u.scheme !== 'android-app')) return undefined
  if (u.host === pageHost || internal.includes(u.host)) return { medium: 'internal' }
  const path = u.path ?? ''
  const hit = lookupReferer(db, u.host, path)
  if (!hit) return { medium: 'unknown' }
  const term = hit.medium === 'search' && hit.parameters !== null ? searchTerm(u.query, hit.parameters) : null
  return { medium: hit.medium, source: hit.source, term }
}

/** What a referrer URL is, parsed the way enrich parses `page_referrer` (undefined: not a URL the parser reads). */
export function refererOfUrl(db: RefererDatabase, internal: readonly string[], url: string, pageHost: string | null): Referer | undefined {
  const r = parseUri(url)
  if (!r.ok) return undefined
  const [scheme, host, , path, query] = uriParts(r.uri)
  return parseReferer(db, internal, { scheme, host, path: path === null ? '' : decode(path, false), query }, pageHost)
}

export const refererParser: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'referer_parser',
  models: [2],
  assets: (config) => [{ name: 'database', location: assetLocation(String(config.parameters.uri), String(config.parameters.database)) }],
  create(config, ctx): Enrichment {
    const location = assetLocation(String(config.parameters.uri), String(config.parameters.database))
    let doc: unknown
    try {
      doc = JSON.parse(readFileSync(ctx.assets.path(location), 'utf8'))
    } catch (err) {
      throw new ConfigError(`${location} is not a referer database (JSON): ${(err as Error).message}`)
    }
    const db = loadReferers(doc, location)
    if (config.parameters.referrers !== undefined) loadReferers(config.parameters.referrers, 'parameters.referrers', db)
    const internal = ((config.parameters.internalDomains as string[] | undefined) ?? []).map((d) => d.trim())
    return {
      id: 'referer-parser',
      order: ORDER.refererParser,
      run(ev) {
        const host = ev.f[F.refr_urlhost] as string | null
        if (host === null) return {}
        const rawPath = ev.f[F.refr_urlpath] as string | null
        const r = parseReferer(
          db,
          internal,
          { scheme: ev.f[F.refr_urlscheme] as string | null, host, path: rawPath === null ? '' : decode(rawPath, false), query: ev.f[F.refr_urlquery] as string | null },
          ev.f[F.page_urlhost] as string | null,
        )
        if (r === undefined) return {}
        ev.f[F.refr_medium] = r.medium
        if ('source' in r) {
          ev.f[F.refr_source] = tsv(r.source)
          ev.f[F.refr_term] = r.term === null ? null : tsv(r.term)
        }
        return {}
      },
    }
  },
}
