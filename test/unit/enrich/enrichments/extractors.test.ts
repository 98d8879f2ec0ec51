/** Cookie and HTTP header extractors: the cases of Snowplow's specs and the steps in the enricher. */
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { extractCookies, extractHeaders, parseParameters } from '../../../../lib/core/enrich/enrichments/extractors'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { linearRegExp } from '../../../../lib/core/iglu/regex-engine'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { batch, columns, only, payload, resolver } from '../helpers'

describe('cookie_extractor_config', () => {
  it('nothing without a cookie header or a configured cookie', () => {
    expect(extractCookies(['Content-Length: 348'], new Set(['cookieKey1']))).toEqual([])
    expect(extractCookies(['Cookie: not-interesting-cookie=1234;'], new Set(['cookieKey1']))).toEqual([])
  })
  it('every configured cookie of every cookie header, in order (no value is null, quotes are removed)', () => {
    const names = new Set(['ck1', '', 'ck3', 'ck4', 'ck5'])
    expect(extractCookies(['cookie: ck1;=cv2;ck3=', 'Cookie:ck4=cv4;ck5="cv5"'], names)).toEqual([
      { name: 'ck1', value: null }, { name: '', value: 'cv2' }, { name: 'ck3', value: '' }, { name: 'ck4', value: 'cv4' }, { name: 'ck5', value: 'cv5' },
    ])
  })
  it('parses name=value parameters separated by ; or , and keeps delimiters inside quotes', () => {
    expect(parseParameters(' a=1 ; b="x;y" , c')).toEqual([{ name: 'a', value: '1' }, { name: 'b', value: 'x;y' }, { name: 'c', value: null }])
  })
})

describe('http_header_extractor_config', () => {
  it('matches the whole header name and trims name and value', () => {
    expect(extractHeaders(['X-Forwarded-For: 129.78.138.66, 129.78.64.103'], linearRegExp('^(?:X-Forwarded-For)$'))).toEqual([{ name: 'X-Forwarded-For', value: '129.78.138.66, 129.78.64.103' }])
    expect(extractHeaders(['Accept: text/html'], linearRegExp('^(?:.*)$'))).toEqual([{ name: 'Accept', value: 'text/html' }])
    expect(extractHeaders([], linearRegExp('^(?:.*)$'))).toEqual([])
    expect(extractHeaders(['X-Forwarded-For-Real: x', 'application/json'], linearRegExp('^(?:X-Forwarded-For)$'))).toEqual([])
  })
})

describe('both in the enricher', () => {
  it('add their contexts to derived_contexts, validated against the org.ietf schemas', async () => {
    const doc = (schema: string, name: string, parameters: unknown) => ({ source: `${name}.json`, text: JSON.stringify({ schema, data: { vendor: schema.slice(5, schema.indexOf('/')), name, enabled: true, parameters } }) })
    const r = await loadEnrichmentConfigs([
      doc('iglu:com.snowplowanalytics.snowplow/cookie_extractor_config/jsonschema/1-0-0', 'cookie_extractor_config', { cookies: ['sp', '_ga'] }),
      doc('iglu:com.snowplowanalytics.snowplow.enrichments/http_header_extractor_config/jsonschema/1-0-0', 'http_header_extractor_config', { headersPattern: 'X-Forwarded-For|Accept-Language' }),
    ], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const o = await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', headers: ['Cookie: sp=abc; _ga=GA1.2; other=1', 'Accept-Language: fr', 'User-Agent: x'] }), batch())
    const derived = JSON.parse(columns((only(o, 'good')[0] as { tsv: string }).tsv).derived_contexts)
    expect(derived.data).toEqual([
      { schema: 'iglu:org.ietf/http_header/jsonschema/1-0-0', data: { name: 'Accept-Language', value: 'fr' } },
      { schema: 'iglu:org.ietf/http_cookie/jsonschema/1-0-0', data: { name: 'sp', value: 'abc' } },
      { schema: 'iglu:org.ietf/http_cookie/jsonschema/1-0-0', data: { name: '_ga', value: 'GA1.2' } },
    ])
  })

  it('the cookie step answers a recurring list of headers as extractCookies does', async () => {
    const text = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/cookie_extractor_config/jsonschema/1-0-0', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'cookie_extractor_config', enabled: true, parameters: { cookies: ['sp', '_ga'] } } })
    const r = await loadEnrichmentConfigs([{ source: 'c.json', text }], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const step = built.enrichments.find((x) => x.id === 'cookie-extractor')!
    const lists = [
      ['Cookie: sp=abc; _ga=1', 'Content-Type: text/plain'],
      ['Cookie: sp=abd; _ga=1', 'Content-Type: text/plain'],
      ['cookie: sp=abc', 'COOKIE: _ga=2'],
      ['Content-Type: text/plain'],
      [],
      ['Cookie: sp=abc; _ga=1', 'Content-Type: text/plain'],
      ['Cookie: ' + 'x'.repeat(9_000) + '; sp=long'],
      ['Cookie: ' + 'x'.repeat(9_000) + '; sp=long2'],
    ]
    for (const headers of [...lists, ...lists]) {
      const got = step.run({} as never, { raw: { payload: { headers } } } as never) as { contexts?: { data: string }[] }
      const want = extractCookies(headers, new Set(['sp', '_ga']))
      expect((got.contexts ?? []).map((c) => JSON.parse(c.data))).toEqual(want)
    }
  })
})
