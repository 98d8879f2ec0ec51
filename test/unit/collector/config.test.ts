import { describe, expect, it } from 'vitest'
import { DEFAULT_COLLECTOR_CONFIG, loadCollectorConfig, parseCollectorConfig, readSchema } from '../../../lib/core/collector/config'

const errorsOf = (input: unknown) => {
  const r = parseCollectorConfig(input)
  if (r.ok) throw new Error('expected errors')
  return r.errors
}

describe('collector configuration', () => {
  it('an empty document gives the documented defaults', () => {
    const r = parseCollectorConfig({})
    expect(r).toEqual({ ok: true, config: DEFAULT_COLLECTOR_CONFIG })
    expect(parseCollectorConfig(undefined)).toEqual({ ok: true, config: DEFAULT_COLLECTOR_CONFIG })
    expect(DEFAULT_COLLECTOR_CONFIG).toMatchObject({
      cookie: { enabled: true, name: 'sp', expirationDays: 365, domains: [], secure: true, httpOnly: true, sameSite: 'None', path: '/' },
      doNotTrackCookie: { enabled: false },
      cors: { accessControlMaxAgeSeconds: 3600 },
      enableDefaultRedirect: false,
      redirectDomains: [],
      crossDomain: { enabled: false, domains: ['*'], secure: true },
      rootResponse: { enabled: false, statusCode: 302, headers: {}, body: '' },
      networking: { dropPayloadSize: 2097152 },
      streams: { useIpAddressAsPartitionKey: false, maxBytes: 1000000 },
      paths: {},
    })
  })

  it('the defaults in the schema are the defaults in the code', () => {
    const schema = readSchema('io.floe/collector_config/jsonschema/1-0-0') as any
    const defaultsOf = (s: any): unknown => {
      if (s.type === 'object' && s.properties) {
        const out: Record<string, unknown> = {}
        for (const [k, v] of Object.entries<any>(s.properties)) {
          const d = defaultsOf(v)
          if (d !== undefined) out[k] = d
        }
        return out
      }
      return s.default
    }
    expect(defaultsOf(schema)).toEqual(DEFAULT_COLLECTOR_CONFIG)
    expect(schema.self).toEqual({ vendor: 'io.floe', name: 'collector_config', format: 'jsonschema', version: '1-0-0' })
    expect(schema.additionalProperties).toBe(false)
  })

  it('merges a partial document over the defaults', () => {
    const c = loadCollectorConfig({ cookie: { name: 'floe', domains: ['acme.com'] }, enableDefaultRedirect: true, streams: { good: 'my-raw' } })
    expect(c.cookie).toEqual({ ...DEFAULT_COLLECTOR_CONFIG.cookie, name: 'floe', domains: ['acme.com'] })
    expect(c.enableDefaultRedirect).toBe(true)
    expect(c.streams).toEqual({ good: 'my-raw', useIpAddressAsPartitionKey: false, maxBytes: 1_000_000 })
  })

  it('rejects unknown keys, naming the path', () => {
    expect(errorsOf({ cookei: {} })).toEqual(['cookei: unknown key'])
    expect(errorsOf({ cookie: { nmae: 'x' } })).toEqual(['cookie.nmae: unknown key'])
    expect(errorsOf({ streams: { maxBytes: 1000, partitionKey: 'ip' } })).toEqual(['streams.partitionKey: unknown key'])
  })

  it('rejects bad values, naming the path', () => {
    expect(errorsOf({ cookie: { sameSite: 'none' } })).toEqual(['cookie.sameSite: must be one of "None", "Lax", "Strict"'])
    expect(errorsOf({ cookie: { secure: 'yes' } })).toEqual(['cookie.secure: must be boolean'])
    expect(errorsOf({ cookie: { domains: ['ok.com', 'bad domain'] } })[0]).toMatch(/^cookie\.domains\[1\]: must match pattern/)
    expect(errorsOf({ networking: { dropPayloadSize: -1 } })).toEqual(['networking.dropPayloadSize: must be >= 1'])
    expect(errorsOf({ streams: { maxBytes: 2_000_000 } })).toEqual(['streams.maxBytes: must be <= 1048000'])
    expect(errorsOf({ paths: { '/com.acme/track': '/elsewhere' } })[0]).toMatch(/^paths\["\/com.acme\/track"\]: must be one of/)
    expect(errorsOf({ paths: { '/too/many/segments': '/r/tp2' } })).toEqual(['paths["/too/many/segments"]: unknown key'])
    expect(errorsOf({ doNotTrackCookie: { enabled: true, name: 'dnt', value: '([' } })[0]).toMatch(/^doNotTrackCookie\.value: not a valid regular expression/)
    expect(errorsOf({ doNotTrackCookie: { enabled: true, value: 'x' } })).toEqual(['doNotTrackCookie.name: required when doNotTrackCookie.enabled is true'])
    expect(errorsOf([])).toEqual(['(root): must be object'])
  })

  it('reports every problem at once', () => {
    expect(errorsOf({ cookie: { name: 1, secure: 'x' }, cors: { accessControlMaxAgeSeconds: 1.5 }, bogus: true })).toEqual([
      'bogus: unknown key',
      'cookie.name: must be string',
      'cookie.secure: must be boolean',
      'cors.accessControlMaxAgeSeconds: must be integer',
    ])
  })

  it('loadCollectorConfig throws with the list', () => {
    expect(() => loadCollectorConfig({ cookie: { sameSite: 'x' } })).toThrow(/Invalid collector configuration:\n {2}cookie\.sameSite/)
  })
})
