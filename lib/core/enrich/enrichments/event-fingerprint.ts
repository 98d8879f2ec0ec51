/**
 * `event_fingerprint_config`: a hash of the event's parameters as the tracker
 * sent them (null values dropped, sorted by name, the excluded ones left out),
 * each as name U+001F value U+001F, in `event_fingerprint`.
 */
import { hash } from 'node:crypto'
import { F } from '../fields'
import type { Enrichment } from '../steps'
import { ConfigError, ORDER, type EnrichmentModule } from './module'

const ALGORITHMS: Record<string, string> = { MD5: 'md5', SHA1: 'sha1', SHA256: 'sha256', SHA384: 'sha384', SHA512: 'sha512' }

/** The fingerprint of a parameter map. */
export function fingerprint(params: ReadonlyMap<string, string | null>, exclude: ReadonlySet<string>, algorithm: string): string {
  const names: string[] = []
  for (const [k, v] of params) if (v !== null && !exclude.has(k)) names.push(k)
  // the default sort compares UTF-16 code units, as `<` does
  names.sort()
  let text = ''
  for (const k of names) text += `${k}\u001f${params.get(k)}\u001f`
  return hash(algorithm, text, 'hex')
}

/**
 * {@link fingerprint} of a tracker's JSON object of string parameters, as the
 * enrichment runs it on every event: the same text hashed, without building
 * the parameter map, and sorting the names only when they differ from the
 * previous event's (a tracker sends the same names in the same order event
 * after event). `order` keeps that previous event's names and their sorted,
 * filtered order between calls.
 */
export function fingerprintFields(fields: Readonly<Record<string, string>>, exclude: ReadonlySet<string>, algorithm: string, order: FieldOrder): string {
  const keys = Object.keys(fields)
  const last = order.keys
  let same = keys.length === last.length
  for (let i = 0; same && i < keys.length; i++) same = keys[i] === last[i]
  if (!same) {
    order.keys = keys
    order.sorted = keys.filter((k) => !exclude.has(k)).sort()
  }
  const sorted = order.sorted
  let text = ''
  for (let i = 0; i < sorted.length; i++) text += sorted[i]! + '\u001f' + fields[sorted[i]!]! + '\u001f'
  return hash(algorithm, text, 'hex')
}

/** The parameter names last seen by {@link fingerprintFields}, and those hashed, in hashing order. */
export interface FieldOrder {
  keys: readonly string[]
  sorted: readonly string[]
}

export const eventFingerprint: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'event_fingerprint_config',
  models: [1],
  create(config): Enrichment {
    const p = config.parameters
    const algorithm = ALGORITHMS[String(p.hashAlgorithm)]
    if (!algorithm) throw new ConfigError(`hashAlgorithm must be one of ${Object.keys(ALGORITHMS).join(', ')}, got ${JSON.stringify(p.hashAlgorithm)}`)
    const exclude = new Set(Array.isArray(p.excludeParameters) ? p.excludeParameters.map(String) : [])
    const order: FieldOrder = { keys: [], sorted: [] }
    return {
      id: 'event-fingerprint',
      order: ORDER.eventFingerprint,
      run(ev, input) {
        const fields = input.raw.fields
        ev.f[F.event_fingerprint] = fields !== undefined ? fingerprintFields(fields, exclude, algorithm, order) : fingerprint(input.raw.parameters, exclude, algorithm)
        return {}
      },
    }
  },
}
