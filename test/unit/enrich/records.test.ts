/**
 * Whole stream records: compressed batches of payloads, and the order of
 * outputs when schema lookups answer asynchronously (a fresh resolver) or
 * synchronously (everything cached).
 */
import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { Enricher, type RecordOutcome } from '../../../lib/core/enrich/enrich'
import { inflate, MAX_DECOMPRESSED_BYTES, zstdDeclaredSizes, zstdDecompress } from '../../../lib/core/enrich/payload'
import { ENRICH_PROCESSOR } from '../../../lib/core/enrich/version'
import { resolverFromConfig } from '../../../lib/core/iglu/resolver-config'
import { defaultResolver, defaultResolverConfig } from '../../../lib/runtime/default-resolver'
import { badRows, batch, columns, payload, tp2 } from './helpers'

const PD = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const linkClick = (url: string | null) =>
  b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: url === null ? { elementId: 'x' } : { targetUrl: url } } })
const webPage = (id: string) => b64({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id } }] })

/** A tp2 POST with these events. */
function post(events: Record<string, string>[]): Buffer {
  return tp2('', { body: JSON.stringify({ schema: PD, data: events }), contentType: 'application/json' })
}

/** A compressed record: gzip of the header `1, 1` and length-prefixed payloads. */
function compressed(payloads: Uint8Array[], header = [1, 1]): Buffer {
  const parts: Buffer[] = [Buffer.from(header)]
  for (const p of payloads) {
    const len = Buffer.alloc(4)
    len.writeInt32BE(p.length)
    parts.push(len, Buffer.from(p))
  }
  return gzipSync(Buffer.concat(parts))
}

/** A zstd frame of raw (stored) blocks, as a zstd encoder may write incompressible data; or of RLE blocks when `rle` is set. */
function zstdFrame(data: Uint8Array, opts: { declare?: number; rle?: { byte: number; blocks: number } } = {}): Buffer {
  const header = (last: boolean, type: number, size: number) => {
    const v = size * 8 + type * 2 + (last ? 1 : 0)
    return [v & 255, (v >> 8) & 255, (v >> 16) & 255]
  }
  const out: number[] = [0x28, 0xb5, 0x2f, 0xfd]
  if (opts.declare !== undefined) {
    const n = opts.declare
    out.push(0xe0, ...Array.from({ length: 8 }, (_, i) => Math.floor(n / 256 ** i) % 256)) // single segment, 8-byte content size
  } else out.push(0x00, (20 - 10) << 3) // no content size, a 1 MB window
  if (opts.rle) {
    for (let i = 0; i < opts.rle.blocks; i++) out.push(...header(i === opts.rle.blocks - 1, 1, 131_072), opts.rle.byte)
  } else {
    for (let at = 0; at < data.length || at === 0; at += 131_072) {
      const part = data.subarray(at, at + 131_072)
      out.push(...header(at + 131_072 >= data.length, 0, part.length), ...part)
    }
  }
  return Buffer.from(out)
}

/** An enricher with its own resolver: nothing cached, so the first lookups answer asynchronously. */
function fresh(): Enricher {
  const resolver = defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '' } })
  return new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true })
}

/** Each output as `kind:page_title` (bad rows as `bad:type`). */
function summary(o: RecordOutcome): string[] {
  return o.outputs.map((x) => (x.kind === 'bad' ? `bad:${x.type}` : `${x.kind}:${columns(x.tsv).page_title}`))
}

const events: Record<string, string>[] = [
  { e: 'pv', p: 'web', tv: 'js-3', page: 'one' },
  { e: 'ue', p: 'web', tv: 'js-3', page: 'two', ue_px: linkClick('https://a.example/') },
  { e: 'ue', p: 'web', tv: 'js-3', page: 'three', ue_px: linkClick(null) },
  { e: 'pv', p: 'web', tv: 'js-3', page: 'four', cx: webPage('5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e1234') },
]
const expected = ['good:one', 'good:two', 'bad:schema_violations', 'incomplete:three', 'good:four']

describe('records', () => {
  it('keeps the events of a payload in order whether lookups answer asynchronously or from the cache', async () => {
    const e = fresh()
    const first = e.enrichRecord(post(events), batch())
    expect(first).toBeInstanceOf(Promise)
    expect(summary(await first)).toEqual(expected)
    const again = e.enrichRecord(post(events), batch())
    expect(again).not.toBeInstanceOf(Promise)
    expect(summary(await again)).toEqual(expected)
  })

  it('enriches every payload of a gzip-compressed record, in order', async () => {
    const record = compressed([post(events.slice(0, 2)), payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3&page=middle' }), post(events.slice(2))])
    const e = fresh()
    // first with lookups answering asynchronously, then from the cache
    for (let pass = 0; pass < 2; pass++) {
      const o = await e.enrichRecord(record, batch())
      expect(o.payloads).toBe(3)
      expect(summary(o)).toEqual(['good:one', 'good:two', 'good:middle', 'bad:schema_violations', 'incomplete:three', 'good:four'])
      expect(o.collectorTimestamp).not.toBeNull()
    }
  })

  it('enriches every payload of a zstd-compressed record, in order, as written by zstd itself and in stored blocks', async () => {
    // three-events.zst: `zstd -19` of the header 1, 1 and two length-prefixed payloads (a POST of pages "zstd one" and "zstd two", a GET of "zstd three")
    const real = readFileSync(new URL('../../fixtures/enrich/three-events.zst', import.meta.url))
    expect(real.subarray(0, 4)).toEqual(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]))
    const o = await fresh().enrichRecord(real, batch())
    expect(o.payloads).toBe(2)
    expect(summary(o)).toEqual(['good:zstd one', 'good:zstd two', 'good:zstd three'])
    const stored = zstdFrame(zstdDecompress(real)!)
    expect(summary(await fresh().enrichRecord(stored, batch()))).toEqual(['good:zstd one', 'good:zstd two', 'good:zstd three'])
    const big = compressed([post(events)]) // a gzip record's payloads, as zstd across several blocks
    const unzipped = (await import('node:zlib')).gunzipSync(big)
    expect(summary(await fresh().enrichRecord(zstdFrame(unzipped), batch()))).toEqual(expected)
  })

  it('stops a zstd record that would decompress beyond the limit, before allocating it', () => {
    expect(zstdDeclaredSizes(zstdFrame(Buffer.alloc(0), { declare: 2 ** 40 }))).toEqual([2 ** 40])
    expect(zstdDecompress(zstdFrame(Buffer.alloc(0), { declare: MAX_DECOMPRESSED_BYTES + 1 }))).toBeUndefined()
    // no declared size: 64 RLE blocks of 128 KB each, counted as they come
    const bomb = zstdFrame(Buffer.alloc(0), { rle: { byte: 0x41, blocks: 64 } })
    expect(zstdDecompress(bomb, 1024 * 1024)).toBeUndefined()
    expect(zstdDecompress(bomb)!.length).toBe(64 * 131_072)
    expect(zstdDeclaredSizes(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00]))).toBe('corrupt')
  })

  it('turns a corrupt or unsupported compressed record into one format-violation bad row', async () => {
    const e = fresh()
    const cases: [Buffer, string][] = [
      [Buffer.concat([gzipSync(Buffer.from([1, 1, 0, 0, 0, 9, 1])).subarray(0, 12)]), 'corrupt compressed payload'],
      [compressed([post(events)], [2, 1]), 'Unsupported versions in compressed record header: 2, 1'],
      [gzipSync(Buffer.from([1, 1, 0, 0, 0, 50, 1, 2])), 'corrupt compressed payload'],
      [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]), 'corrupt compressed payload'],
      [readFileSync(new URL('../../fixtures/enrich/three-events.zst', import.meta.url)).subarray(0, 100), 'corrupt compressed payload'],
      [zstdFrame(Buffer.from([2, 1, 0, 0, 0, 0])), 'Unsupported versions in compressed record header: 2, 1'],
      [zstdFrame(Buffer.from([1, 1, 0, 0, 0, 50, 1, 2])), 'corrupt compressed payload'],
    ]
    for (const [record, message] of cases) {
      const o = await e.enrichRecord(record, batch())
      const rows = badRows(o)
      expect(rows, message).toHaveLength(1)
      expect(rows[0].schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/collector_payload_format_violation/jsonschema/1-0-0')
      expect(rows[0].data.failure.message.error).toBe(message)
      expect(Buffer.from(rows[0].data.payload, 'base64').equals(record)).toBe(true)
    }
  })

  it('reports a payload over maxBytesSinglePayload as a size violation naming the decompression, with the whole record, and reads on', async () => {
    const e = new Enricher({ ...fresh().settings, maxBytesSinglePayload: 400 })
    const small = tp2('e=pv&p=web&tv=t&aid=after')
    const big = post(events)
    expect(small.length).toBeLessThan(400)
    expect(big.length).toBeGreaterThan(400)
    const gz = compressed([big, small])
    for (const [record, name] of [[gz, 'Gzip'], [zstdFrame((await import('node:zlib')).gunzipSync(gz)), 'Zstd']] as const) {
      const o = await e.enrichRecord(record, batch())
      const rows = badRows(o)
      expect(rows).toHaveLength(1)
      expect(rows[0].schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0')
      expect(rows[0].data.failure).toMatchObject({ maximumAllowedSizeBytes: 400, actualSizeBytes: big.length, expectation: `Collector payload will exceed maximum allowed size of 400 after ${name} decompression` })
      expect(rows[0].data.payload).toBe(record.toString('base64'))
      // the payload after the oversized one is still enriched
      expect(o.outputs.filter((x) => x.kind === 'good').map((x) => columns((x as { tsv: string }).tsv).app_id)).toEqual(['after'])
    }
  })

  /** A gzip bomb: a record whose header announces one payload of `mb` MB of zeros (gzip members of 8 MB of zeros each, concatenated). */
  const bomb = (mb: number) => {
    const head = Buffer.alloc(6)
    head[0] = 1
    head[1] = 1
    head.writeInt32BE(mb * 1024 * 1024, 2)
    const zeros = gzipSync(Buffer.alloc(8 * 1024 * 1024), { level: 9 })
    return Buffer.concat([gzipSync(head), ...Array.from({ length: Math.ceil(mb / 8) }, () => zeros)])
  }

  it('stops inflating a gzip bomb at the limit, holding no more than the limit', () => {
    const b = bomb(104)
    expect(b.length).toBeLessThan(200_000)
    expect(inflate(b, 'gzip', 1024 * 1024)).toEqual({ tooLarge: 1024 * 1024 + 1 })
    const r = inflate(b, 'gzip')
    expect('tooLarge' in r && r.tooLarge).toBe(MAX_DECOMPRESSED_BYTES + 1)
    expect((inflate(gzipSync(Buffer.alloc(1000)), 'gzip', 1000) as { data: Buffer }).data.length).toBe(1000)
    expect(inflate(zstdFrame(Buffer.alloc(0), { declare: 2 ** 40 }), 'zstd')).toEqual({ tooLarge: 2 ** 40 })
    expect(inflate(zstdFrame(Buffer.alloc(0), { rle: { byte: 0x41, blocks: 64 } }), 'zstd', 1024 * 1024)).toEqual({ tooLarge: 1024 * 1024 + 1 })
  })

  it('turns a record that unpacks beyond the limit (gzip or zstd bomb) into one size violation, as Snowplow words it', async () => {
    const e = fresh()
    const cases: [Buffer, string, number][] = [
      [bomb(104), 'Gzip', MAX_DECOMPRESSED_BYTES + 1],
      [bomb(600), 'Gzip', MAX_DECOMPRESSED_BYTES + 1],
      [zstdFrame(Buffer.alloc(0), { declare: 2 ** 40 }), 'Zstd', 2 ** 40],
    ]
    for (const [record, name, actual] of cases) {
      const before = process.memoryUsage().rss
      const o = await e.enrichRecord(record, batch())
      // loosely: nowhere near the hundreds of megabytes the record unpacks to
      expect(process.memoryUsage().rss - before).toBeLessThan(4 * MAX_DECOMPRESSED_BYTES)
      const rows = badRows(o)
      expect(rows, name).toHaveLength(1)
      expect(rows[0].schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0')
      expect(rows[0].data.failure).toMatchObject({ maximumAllowedSizeBytes: MAX_DECOMPRESSED_BYTES, actualSizeBytes: actual, expectation: `Collector payload will exceed maximum allowed size of ${MAX_DECOMPRESSED_BYTES} after ${name} decompression` })
      expect(rows[0].data.payload).toBe(record.toString('base64'))
    }
  })

  it('keeps the payloads read before a corrupt part of a record', async () => {
    const e = fresh()
    const record = compressed([tp2('e=pv&p=web&tv=t&aid=before')])
    const raw = (await import('node:zlib')).gunzipSync(record)
    const broken = gzipSync(Buffer.concat([raw, Buffer.from([0, 0, 0, 50, 1, 2])]))
    const o = await e.enrichRecord(broken, batch())
    expect(o.outputs.filter((x) => x.kind === 'good').map((x) => columns((x as { tsv: string }).tsv).app_id)).toEqual(['before'])
    expect(badRows(o).map((r) => r.data.failure.message.error)).toEqual(['corrupt compressed payload'])
  })
})

describe('a schema repository that cannot be reached', () => {
  /** The default repositories with Iglu Central over HTTP unreachable, and a small lookup budget. */
  function offline(lookupTimeoutMs = 300): { enricher: Enricher; calls: () => number } {
    let calls = 0
    const fetch = (async () => {
      calls++
      throw new Error('connect ECONNREFUSED 127.0.0.1:9')
    }) as unknown as typeof globalThis.fetch
    const { config, extra } = defaultResolverConfig({ env: { FLOE_IGLU_CENTRAL_URL: 'http://127.0.0.1:9' } })
    const resolver = resolverFromConfig(config, { extra, fetch, lookupTimeoutMs })
    return { enricher: new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true }), calls: () => calls }
  }
  const unknown = (n: number) => ({ e: 'ue', p: 'web', tv: 'js-3', page: `unknown-${n}`, ue_px: b64({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: `iglu:com.acme.private/thing_${n}/jsonschema/1-0-0`, data: { a: 1 } } }) })

  it('gives the event that needs it a ResolutionError bad row naming the failure, and enriches the others of the payload', async () => {
    const { enricher, calls } = offline()
    const mixed = [...events.slice(0, 2), unknown(1), events[3]!]
    const o = await enricher.enrichRecord(post(mixed), batch())
    expect(summary(o)).toEqual(['good:one', 'good:two', 'bad:schema_violations', 'incomplete:unknown-1', 'good:four'])
    const [row] = badRows(o)
    const message = row.data.failure.messages[0]
    expect(message.schemaKey).toBe('iglu:com.acme.private/thing_1/jsonschema/1-0-0')
    expect(message.error.error).toBe('ResolutionError')
    const http = message.error.lookupHistory.find((h: { repository: string }) => h.repository === 'Iglu Central')
    expect(http.errors).toEqual([{ error: 'RepoFailure', message: expect.stringContaining('ECONNREFUSED') }])
    expect(http.attempts).toBeGreaterThan(1)
    expect(message.error.lookupHistory.find((h: { repository: string }) => h.repository === 'Iglu Central snapshot').errors).toEqual([{ error: 'NotFound' }])
    expect(calls()).toBeGreaterThan(1)
  })

  it('spends the lookup budget once: later unknown schemas fail at once while the repository is skipped', async () => {
    const { enricher, calls } = offline(300)
    await enricher.enrichRecord(post([unknown(2)]), batch())
    const before = calls()
    const o = await enricher.enrichRecord(post([unknown(3), unknown(4), events[0]!]), batch())
    expect(calls()).toBe(before)
    expect(summary(o)).toEqual(['bad:schema_violations', 'incomplete:unknown-3', 'bad:schema_violations', 'incomplete:unknown-4', 'good:one'])
    const history = badRows(o)[0].data.failure.messages[0].error.lookupHistory.find((h: { repository: string }) => h.repository === 'Iglu Central')
    expect(history.errors[0].message).toMatch(/^not tried: failing \(next attempt after/)
  })
})
