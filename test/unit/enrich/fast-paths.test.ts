/**
 * The hand-written fast paths of the enrich core agree with the plain
 * definitions they replace (Date, BigInt, regular expressions, JSON.stringify).
 */
import { describe, expect, it } from 'vitest'
import { base64Text, decodeBase64Lenient, formatTimestamp, isUuid, parseTimestamp, plainMillis, toDims, toInt, toTimestamp, toUuid } from '../../../lib/core/enrich/convert'
import { javaFloat, javaFloatText, toPartialJson, toTsv } from '../../../lib/core/enrich/event'
import { F, FIELD_COUNT, FIELD_KINDS, FIELDS } from '../../../lib/core/enrich/fields'
import { arrayElements, compactJson, memberSpan, quote, sdjSpans, wrapperSpans } from '../../../lib/core/enrich/json'
import { derivedTimestamp, EventStepInput } from '../../../lib/core/enrich/steps'
import { splitQuery } from '../../../lib/core/enrich/querystring'
import { rawEventJson } from '../../../lib/core/enrich/badrows'
import type { LoadedPayload } from '../../../lib/core/enrich/payload'
import { parseUri } from '../../../lib/core/enrich/uri'
import { goodColumns, run, tp2 } from './helpers'

/** A deterministic pseudo-random sequence (xorshift). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x / 4294967296
  }
}

/** Up to `maxLength` pieces drawn from `pieces` by `r`. */
function randomText(r: () => number, pieces: readonly string[], maxLength: number): string {
  let t = ''
  const n = Math.floor(r() * maxLength)
  for (let j = 0; j < n; j++) t += pieces[Math.floor(r() * pieces.length)]
  return t
}

const pad = (n: number, w: number) => String(n).padStart(w, '0')
function dateText(ms: number): string {
  const d = new Date(ms)
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}`
}
const dateUtc = (s: string) =>
  Date.UTC(Number(s.slice(0, 4)), Number(s.slice(5, 7)) - 1, Number(s.slice(8, 10)), Number(s.slice(11, 13)), Number(s.slice(14, 16)), Number(s.slice(17, 19)), Number(s.slice(20, 23)))

describe('timestamps', () => {
  it('formats and parses like Date over years 0000-9999, neighbouring milliseconds included', () => {
    const r = rng(1)
    for (let i = 0; i < 4000; i++) {
      const base = Math.floor(-62167219200000 + r() * (253402300800000 + 62167219200000))
      for (const ms of [base, base + 1, base - 1, base + 999, Math.floor(base / 1000) * 1000]) {
        const t = formatTimestamp(ms)
        expect(t).toBe(dateText(ms))
        expect(Object.is(parseTimestamp(t), dateUtc(t))).toBe(true)
      }
    }
  })

  it('parses like Date.UTC outside the ordinary range too', () => {
    for (const t of ['0050-01-01 00:00:00.000', '0099-12-31 23:59:59.999', '0100-03-01 00:00:00.000', '2024-02-30 25:61:61.999', '2024-00-10 00:00:00.000', '2024-13-10 00:00:00.000', '2000-02-29 12:00:00.001', '1900-03-01 00:00:00.000']) {
      expect(Object.is(parseTimestamp(t), dateUtc(t)), t).toBe(true)
    }
  })

  it('converts epoch milliseconds as the BigInt definition does', () => {
    const reference = (s: string) => {
      if (!/^[+-]?[0-9]{1,19}$/.test(s)) return { ok: false }
      const big = BigInt(s)
      if (big > 9223372036854775807n || big < -9223372036854775808n) return { ok: false }
      const ms = Number(big)
      if (ms < -62167219200000 || ms >= 253402300800000) return { ok: false }
      return { ok: true, value: dateText(ms) }
    }
    const r = rng(2)
    const cases = ['0', '00000001714470000000', '1714470000000', '253402300799999', '253402300800000', '999999999999999', '1000000000000000', '-1', '+5', '', 'x', '9223372036854775808']
    for (let i = 0; i < 5000; i++) cases.push(String(Math.floor(r() * 10 ** Math.floor(r() * 17))))
    for (const s of cases) {
      const got = toTimestamp(s)
      const want = reference(s)
      expect(got.ok, s).toBe(want.ok)
      if (got.ok && want.ok) expect(got.value).toBe(want.value)
      // the fast path: plain digits read as milliseconds, or NaN for toTimestamp to decide
      const plain = plainMillis(s)
      if (/^[0-9]{1,15}$/.test(s) && Number(s) < 253402300800000) {
        expect(plain, s).toBe(Number(s))
        expect(formatTimestamp(plain)).toBe(want.ok && want.value)
      } else expect(plain, s).toBeNaN()
    }
  })
})

describe('atomic conversions', () => {
  it('integers, dimensions and UUIDs as the regular expressions define them', () => {
    for (const s of ['0', '7', '123456789', '1234567890', '2147483647', '2147483648', '-5', '+5', '', 'null', 'NULL', '1a', '٣']) {
      const n = /^[+-]?[0-9]+$/.test(s) ? Number(s) : undefined
      const got = toInt(s)
      if (s.toLowerCase() === 'null') expect(got).toEqual({ ok: true, value: null })
      else if (n === undefined || n > 2147483647 || n < -2147483648) expect(got.ok, s).toBe(false)
      else expect(got).toEqual({ ok: true, value: n })
    }
    for (const s of ['1920x1080', '0x0', 'x1', '1x', 'x', '1x2x3', '12X3', ' 1x2', '99999999999x1', '1x2 ', '0001920x01080', '2147483647x2147483648', '9'.repeat(400) + 'x1', '1x' + '9'.repeat(400)]) {
      const m = /^([0-9]+)x([0-9]+)$/.exec(s)
      const got = toDims(s)
      if (!m || Number(m[1]) > 2147483647 || Number(m[2]) > 2147483647) expect(got.ok, s).toBe(false)
      else expect(got).toEqual({ ok: true, value: [Number(m[1]), Number(m[2])] })
    }
    const re = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    for (const s of ['c6ef3124-b53a-4b13-a233-0123456789ab', 'C6EF3124-B53A-4B13-A233-0123456789AB', 'c6ef3124b53a-4b13-a233-0123456789ab0', 'g6ef3124-b53a-4b13-a233-0123456789ab', 'c6ef3124-b53a-4b13-a233-0123456789a', '']) {
      const l = s.toLowerCase()
      expect(toUuid(s)).toEqual(re.test(l) ? { ok: true, value: l } : { ok: false, error: 'Not a valid UUID' })
      expect(isUuid(s)).toBe(re.test(l))
    }
  })

  it('decodes clean base64 of both alphabets like Buffer, and the rest leniently', () => {
    const r = rng(3)
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(Array.from({ length: Math.floor(r() * 3000) }, () => Math.floor(r() * 256)))
      for (const enc of ['base64', 'base64url'] as const) {
        const s = bytes.toString(enc)
        expect(base64Text(s)).toBe(Buffer.from(s, 'base64').toString('utf8'))
      }
    }
    for (const s of ['a b', 'YWJj!', 'YQ', 'YQ=', 'YQ==', 'Y', 'YW=Jj', 'é']) expect(base64Text(s)).toBe(decodeBase64Lenient(s).toString('utf8'))
  })

  it('decodes any ASCII text through Node as the lenient decoder does (stray characters, = anywhere, any length)', () => {
    const r = rng(11)
    // the base64 alphabets, with stray characters among them about one time in six
    const pieces = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_', '=', '==', ' ', '\n', '!', '.', '\u0000', '\u007f', '~', '%', ':', '\\', '"']
    for (let i = 0; i < 50_000; i++) {
      const s = randomText(r, pieces, 48)
      expect(base64Text(s, true), JSON.stringify(s)).toBe(decodeBase64Lenient(s).toString('utf8'))
    }
    const long = 'QUJD!'.repeat(300_000)
    expect(base64Text(long, true)).toBe(decodeBase64Lenient(long).toString('utf8'))
  })

  it('takes a POST body as ASCII only when it is: non-ASCII and escaped base64 is decoded leniently', async () => {
    // U+0141 is read by Node's decoder as the byte 0x41 ('A'); the lenient decoder skips it
    const cx = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: '5e8ea7e6-4bd8-4a6b-9ff1-3a2c1d0e1234' } }] })).toString('base64')
    const broken = cx.slice(0, 8) + '\u0141' + cx.slice(8)
    for (const [value, body] of [
      [broken, (v: string) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [{ e: 'pv', p: 'web', tv: 'js-3', cx: v }] })],
      [broken, (v: string) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [{ e: 'pv', p: 'web', tv: 'js-3', cx: v }] }).replace('\u0141', '\\u0141')],
    ] as const) {
      const post = await run(tp2('', { body: body(value), contentType: 'application/json' }))
      const get = await run(tp2(`e=pv&p=web&tv=js-3&cx=${encodeURIComponent(value)}`))
      expect(post.outputs.map((o) => o.kind)).toEqual(get.outputs.map((o) => o.kind))
      expect(post.outputs.map((o) => o.kind)).toEqual(['good'])
    }
  })
})

describe('JSON text', () => {
  it('quotes like JSON.stringify', () => {
    const r = rng(4)
    const chars = ['a', ' ', '"', '\\', '\n', '\u0001', '\u007f', 'é', '\u2028', '\ud83d\ude00', '\ud800', '\udc00', '/']
    for (let i = 0; i < 5000; i++) {
      const s = randomText(r, chars, 20)
      expect(quote(s)).toBe(JSON.stringify(s))
    }
    expect(quote('x'.repeat(300) + '"')).toBe(JSON.stringify('x'.repeat(300) + '"'))
  })

  it('finds members by decoded key, the last of repeated ones', () => {
    const text = ' {"a":1, "d\\u0061ta" : [1,"x\\"]"], "data":{"k":"v"} , "b\\\\":"\\\\"} '
    const span: [number, number] = [1, text.length - 1]
    const d = memberSpan(text, span, 'data')!
    expect(text.slice(d[0], d[1])).toBe('{"k":"v"}')
    const b = memberSpan(text, span, 'b\\')!
    expect(text.slice(b[0], b[1])).toBe('"\\\\"')
    expect(memberSpan(text, span, 'nope')).toBeUndefined()
  })

  it('walks a wrapper once: the elements of an array data, with their data members, as arrayElements and memberSpan find them', () => {
    const array = '[ {"schema":"s","data":{"a":[1,{"data":2}]}} ,3, {"data":1,"d\\u0061ta" : "x]"}, {}, "{", [ {"data":0} ] ,{"schema":"t"}, {"data":{"k":"a\\"b"}}, {"data":[1, 2]}]'
    const text = ` { "data" : 5, "schema":"w", "data":${array} } `
    const w = wrapperSpans(text, [1, text.length - 1])
    expect(text.slice(w.data![0], w.data![1])).toBe(array)
    expect(w.inner).toBeUndefined()
    const elements = w.elements!
    expect(elements.map((e) => e.span)).toEqual(arrayElements(text, w.data!))
    expect(elements.map((e) => e.data)).toEqual(elements.map((e) => (text[e.span[0]] === '{' ? memberSpan(text, e.span, 'data') : undefined)))
    expect(elements.map((e) => (e.data ? text.slice(e.data[0], e.data[1]) : undefined))).toEqual(['{"a":[1,{"data":2}]}', undefined, '"x]"', undefined, undefined, undefined, undefined, '{"k":"a\\"b"}', '[1, 2]'])
    // compact: the text is what compactJson gives (no whitespace outside strings, no escape)
    expect(elements.map((e) => e.compact)).toEqual([true, false, true, false, false, false, false, false, false])
    for (const e of elements) if (e.compact) expect(compactJson(text, e.data![0], e.data![1])).toBe(text.slice(e.data![0], e.data![1]))
  })

  it('walks an unstruct wrapper once to its inner entity and the data of that', () => {
    const text = '{"schema":"u","data":{"schema":"i","data":{"a":"x y","b":[1,{"c":null}]}}}'
    const w = wrapperSpans(text, [0, text.length])
    expect(w.elements).toBeUndefined()
    expect(w.inner!.span).toEqual(w.data)
    expect(text.slice(w.inner!.data![0], w.inner!.data![1])).toBe('{"a":"x y","b":[1,{"c":null}]}')
    expect(w.inner!.compact).toBe(true)
    const spacedText = '{"schema":"u","data":{"schema":"i","data":{"a":1, "b":2}}}'
    expect(wrapperSpans(spacedText, [0, spacedText.length]).inner!.compact).toBe(false)
    expect(sdjSpans(text, w.data!)).toEqual(w.inner)
  })

  it('compacts keeping numbers and key order as written, escapes normalised', () => {
    const text = '{ "b" : 1.50e2, "a":[ "x y", "\\u00e9\\"\\\\", "q\\/" ], "1": -0.0 }'
    expect(compactJson(text)).toBe('{"b":1.50e2,"a":["x y","é\\"\\\\","q/"],"1":-0.0}')
  })
})

describe('TSV line', () => {
  it('writes nulls as empty columns, numbers as text and floats the Java way', () => {
    const f: (string | number | null)[] = new Array(FIELD_COUNT).fill(null)
    f[F.app_id] = 'shop'
    f[F.domain_sessionidx] = 3
    f[F.br_cookies] = 1
    const plain = toTsv(f).split('\t')
    expect(plain).toHaveLength(FIELD_COUNT)
    expect([plain[F.app_id], plain[F.domain_sessionidx], plain[F.br_cookies], plain[F.platform]]).toEqual(['shop', '3', '1', ''])
    f[F.geo_latitude] = 1e-5
    f[F.geo_longitude] = 12
    const withFloats = toTsv(f).split('\t')
    expect([withFloats[F.geo_latitude], withFloats[F.geo_longitude], withFloats[F.app_id]]).toEqual(['1.0E-5', '12.0', 'shop'])
  })

  it('with float columns: each column as the plain definition writes it; floats remembered give the computed text', () => {
    const reference = (f: readonly (string | number | null)[]) => f.map((v, i) => (v === null ? '' : typeof v === 'string' ? v : FIELD_KINDS[i] === 'float' ? javaFloatText(v) : String(v))).join('\t')
    const r = rng(29)
    // a few recurring coordinates, and new ones, signed zeros, extremes
    const floats = [0, -0, 43.88, 125.3228, -33.494, 151.2, 1e-5, 1e7, -1e-3, 3.4e38, NaN, Infinity]
    for (let k = 0; k < 3000; k++) {
      const f: (string | number | null)[] = new Array(FIELD_COUNT).fill(null)
      for (let j = 0; j < 12; j++) {
        const i = Math.floor(r() * FIELD_COUNT)
        const kind = FIELD_KINDS[i]
        f[i] = kind === 'int' || kind === 'bool' ? Math.floor(r() * 100) : kind === 'float' ? (r() < 0.7 ? floats[Math.floor(r() * floats.length)]! : (r() - 0.5) * 360) : 'x' + j
      }
      f[F.geo_latitude] = r() < 0.8 ? floats[Math.floor(r() * floats.length)]! : (r() - 0.5) * 180
      expect(toTsv(f)).toBe(reference(f))
      for (const i of [F.geo_latitude, F.geo_longitude]) if (typeof f[i] === 'number') expect(javaFloat(f[i] as number)).toBe(javaFloatText(f[i] as number))
    }
    expect([javaFloat(-0), javaFloat(0), javaFloat(0), javaFloat(-0)]).toEqual(['-0.0', '0.0', '0.0', '-0.0'])
  })
})

describe('raw event JSON of bad rows', () => {
  it('lists the parameters as JSON.stringify would, whichever names and values need escaping', () => {
    const p: LoadedPayload = {
      vendor: 'com.snowplowanalytics.snowplow', version: 'tp2', querystring: [], contentType: 'application/json', body: '{}', collector: 'c', encoding: 'UTF-8',
      hostname: 'h', timestamp: 0, ipAddress: '1.2.3.4', userAgent: 'ua "x"', refererUri: null, headers: ['A: b', 'Quote: "'], networkUserId: null,
    }
    const r = rng(17)
    const texts = ['web', 'a"b', 'x\\y', 'tab\t', 'é', '\ud800', '{"schema":"s","data":{}}']
    const names = ['e', 'p', 'tv', 'ue_pr', 'co', 'url', 'we"ird', 'tab\tname']
    for (let k = 0; k < 3000; k++) {
      const params: Record<string, string> = {}
      for (let j = 0; j < 6; j++) params[names[Math.floor(r() * names.length)]!] = texts[r() < 0.8 ? 0 : Math.floor(r() * texts.length)]!
      const got = rawEventJson(p, params).json
      const parsed = JSON.parse(got)
      expect(parsed.parameters).toEqual(Object.entries(params).map(([name, value]) => ({ name, value })))
      expect(got).toContain(`"parameters":${JSON.stringify(Object.entries(params).map(([name, value]) => ({ name, value })))}`)
      expect(parsed.headers).toEqual(p.headers)
    }
  })
})

describe('partially enriched JSON', () => {
  it('is every column by name, strings escaped as JSON.stringify does, whichever columns need it', () => {
    const reference = (f: readonly (string | number | null)[]) =>
      '{' + FIELDS.map((name, i) => {
        const v = f[i]!
        return `"${name}":${v === null ? 'null' : typeof v === 'string' ? JSON.stringify(v) : FIELD_KINDS[i] === 'float' ? javaFloat(v) : String(v)}`
      }).join(',') + '}'
    const r = rng(13)
    const texts = ['shop', 'a"b', 'back\\slash', 'tab\tin', 'é', '\ud800', '😀', '', '{"schema":"x","data":{}}']
    for (let k = 0; k < 3000; k++) {
      const f: (string | number | null)[] = new Array(FIELD_COUNT).fill(null)
      for (let j = 0; j < 20; j++) {
        const i = Math.floor(r() * FIELD_COUNT)
        const kind = FIELD_KINDS[i]
        // mostly plain text, sometimes one that needs escaping
        f[i] = kind === 'int' || kind === 'bool' ? Math.floor(r() * 100) : kind === 'float' ? r() * 90 : texts[r() < 0.9 ? 0 : Math.floor(r() * texts.length)]!
      }
      const got = toPartialJson(f)
      expect(got).toBe(reference(f))
      expect(Object.keys(JSON.parse(got))).toEqual([...FIELDS])
    }
  })
})

describe('derived timestamp', () => {
  it('is what derivedTimestamp gives for the written columns, years before 100 included', async () => {
    const cases: [string, string, number][] = [
      ['1714470000000', '1714470000100', 1714470000500],
      ['1714470000100', '1714470000000', 1714470000500],
      ['5', '7', 1714470000500],
      ['1714470000000', '1714470000100', -60000000000000],
      ['1714470000000', '1714470000100', -59011459200000],
    ]
    for (const [dtm, stm, timestamp] of cases) {
      const c = goodColumns(await run(tp2(`e=pv&p=web&tv=js-3&dtm=${dtm}&stm=${stm}`, { timestamp })))
      expect(c.derived_tstamp, `${dtm} ${stm}`).toBe(derivedTimestamp(c.dvce_created_tstamp || null, c.dvce_sent_tstamp || null, c.collector_tstamp || null, null))
    }
  })
})

describe('URLs', () => {
  it('splits like the URI regular expression', () => {
    const re = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s
    const r = rng(5)
    const alphabet = ['a', 'Z', '0', '+', '.', '-', ':', '/', '?', '#', '@', '[', ']', '%20', 'é', ' ', 'http', 'https://', '//', ':80']
    for (let k = 0; k < 20_000; k++) {
      const t = randomText(r, alphabet, 12)
      const got = parseUri(t)
      if (!got.ok) continue
      const m = re.exec(got.uri.text)!
      expect([got.uri.scheme, got.uri.path, got.uri.query, got.uri.fragment], t).toEqual([m[1] ?? null, m[3] ?? null, m[4] ?? null, m[5] ?? null])
    }
  })
})

describe('URLs with broken UTF-16', () => {
  it('a lone high surrogate before an ordinary character is encoded as `?` (as Java encodes it), not thrown', () => {
    // The `|` makes the strict parse fail, so the lenient encoder runs.
    const r = parseUri('http://example.com/a\ud800b|c')
    expect(r.ok).toBe(true)
    if (r.ok) expect(r.uri.path).toBe('/a%3Fb%7Cc')
  })
})

describe('TSV-safe text without per-value checks', () => {
  // eslint-disable-next-line no-control-regex
  const CONTROL = /[\x00-\x1f\x7f]/
  it('a parsed URI and its parts hold no control character, whatever the input', () => {
    const r = rng(9)
    const alphabet = ['a', '/', '?', '#', ':', '%', '%41', '\t', '\n', '\r', '\u0000', '\u001f', '\u007f', '\u0085', '\u009f', 'é', ' ', '\u2028', 'http://', '//h:8', '[::1]']
    let parsed = 0
    for (let k = 0; k < 20_000; k++) {
      const t = randomText(r, alphabet, 10)
      const got = parseUri(t)
      if (!got.ok) continue
      parsed++
      const u = got.uri
      for (const part of [u.text, u.scheme, u.host, u.path, u.query, u.fragment]) if (part !== null) expect(CONTROL.test(part), JSON.stringify(t)).toBe(false)
    }
    expect(parsed).toBeGreaterThan(10_000)
  })

  it('POST bodies with escaped control characters and DEL are cleaned as GET parameters are', async () => {
    for (const page of ['a\tb', 'a\nb\r', 'a\u007fb', 'a\u0001b', 'plain']) {
      const body = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [{ e: 'pv', p: 'web', tv: 'js-3', page, aid: page }] })
      const post = goodColumns(await run(tp2('', { body, contentType: 'application/json' })))
      const get = goodColumns(await run(tp2(`e=pv&p=web&tv=js-3&page=${encodeURIComponent(page)}&aid=${encodeURIComponent(page)}`)))
      expect(post.page_title, JSON.stringify(page)).toBe(get.page_title)
      expect(post.app_id).toBe(get.app_id)
      expect(CONTROL.test(post.page_title!)).toBe(false)
    }
  })
})

describe('page query', () => {
  it('is split as splitQuery splits it, text after text and when a text recurs', () => {
    const r = rng(7)
    const texts = Array.from({ length: 300 }, () => randomText(r, ['a', '=', '&', '%20', '+', 'utm_source', '%', 'é', '=='], 12))
    texts.push('x'.repeat(3_000) + '=1')
    for (const text of [...texts, ...texts.reverse()]) {
      const input = new EventStepInput({} as never)
      input.pageQueryText = text
      expect(input.pageQuery).toEqual(splitQuery(text))
    }
  })
})
