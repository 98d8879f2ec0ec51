import { afterEach, describe, expect, it } from 'vitest'
import { collectorConfigFromEnv, collectorHttpHandler, COLLECTOR_CONFIG_ENV, type RecordSink } from '../../../functions/collector/app'
import { DEFAULT_COLLECTOR_CONFIG } from '../../../lib/core/collector/config'
import { httpDate } from '../../../lib/core/collector/cookies'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { NOW, request } from './helpers'

afterEach(() => {
  delete process.env[COLLECTOR_CONFIG_ENV]
})

describe('collector handler shell', () => {
  it('answers only after the sink resolved, with what the core decided', async () => {
    const order: string[] = []
    const sink: RecordSink = async (records) => {
      order.push(`sink ${records.length}`)
    }
    const res = await collectorHttpHandler(sink, () => DEFAULT_COLLECTOR_CONFIG)(request({ rawQuery: 'e=pv' }))
    order.push(`answer ${res.statusCode}`)
    expect(order).toEqual(['sink 1', 'answer 200'])
  })

  it('takes the time from the clock it is given: the record timestamp and the cookie Expires', async () => {
    const raw: Uint8Array[] = []
    const h = collectorHttpHandler(async (records) => void raw.push(...records.filter((r) => r.stream === 'raw').map((r) => r.data)), () => DEFAULT_COLLECTOR_CONFIG, () => NOW)
    const res = await h(request({ rawQuery: 'e=pv' }))
    expect(res.cookies?.[0]).toContain(`Expires=${httpDate(NOW + DEFAULT_COLLECTOR_CONFIG.cookie.expirationDays * 86_400_000)};`)
    const decoded = decodeCollectorPayload(Buffer.from(raw[0]!))
    expect(decoded.ok && decoded.payload.timestamp).toBe(NOW)
  })

  it('does not call the sink when there is nothing to write', async () => {
    let calls = 0
    const h = collectorHttpHandler(async () => void calls++, () => DEFAULT_COLLECTOR_CONFIG)
    expect((await h(request({ method: 'OPTIONS' }))).statusCode).toBe(200)
    expect((await h(request({ path: '/health' }))).statusCode).toBe(200)
    expect(calls).toBe(0)
  })

  it('a failed write → 503 and an unhealthy /sink-health until a write succeeds', async () => {
    let fail = true
    const h = collectorHttpHandler(async () => {
      if (fail) throw new Error('stream down')
    }, () => DEFAULT_COLLECTOR_CONFIG)
    const errors: unknown[] = []
    const original = console.error
    console.error = (...a: unknown[]) => void errors.push(a)
    try {
      expect((await h(request())).statusCode).toBe(503)
    } finally {
      console.error = original
    }
    expect(errors).toHaveLength(1)
    expect((await h(request({ path: '/sink-health' }))).statusCode).toBe(503)
    fail = false
    expect((await h(request())).statusCode).toBe(200)
    expect((await h(request({ path: '/sink-health' }))).statusCode).toBe(200)
  })

  it('reads and validates FLOE_COLLECTOR_CONFIG', () => {
    expect(collectorConfigFromEnv()).toBe(DEFAULT_COLLECTOR_CONFIG)
    process.env[COLLECTOR_CONFIG_ENV] = JSON.stringify({ cookie: { name: 'floe' } })
    expect(collectorConfigFromEnv().cookie.name).toBe('floe')
    process.env[COLLECTOR_CONFIG_ENV] = JSON.stringify({ cookie: { nmae: 'floe' } })
    expect(() => collectorConfigFromEnv()).toThrow(/cookie\.nmae: unknown key/)
  })
})
