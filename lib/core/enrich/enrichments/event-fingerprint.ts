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

export const eventFingerprint: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'event_fingerprint_config',
  models: [1],
  create(config): Enrichment {
    const p = config.parameters
    const algorithm = ALGORITHMS[String(p.hashAlgorithm)]
    if (!algorithm) throw new ConfigError(`hashAlgorithm must be one of ${Object.keys(ALGORITHMS).join(', ')}, got ${JSON.stringify(p.hashAlgorithm)}`)
    const exclude = new Set(Array.isArray(p.excludeParameters) ? p.excludeParameters.map(String) : [])
    return {
      id: 'event-fingerprint',
      order: ORDER.eventFingerprint,
      run(ev, input) {
        ev.f[F.event_fingerprint] = fingerprint(input.raw.parameters, exclude, algorithm)
        return {}
      },
    }
  },
}
