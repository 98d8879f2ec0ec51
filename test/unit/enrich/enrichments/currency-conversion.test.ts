/**
 * `currency_conversion_config` against a local server answering as Open
 * Exchange Rates does (`/api/historical/YYYY-MM-DD.json`, its error bodies),
 * with the cases of Snowplow's CurrencyConversionEnrichmentSpec (developer
 * account, base EUR, 2011-03-13): the server's rates are chosen so that the
 * GBP → EUR rate, computed Snowplow's way, gives the amounts that spec expects.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { NodeHttpGet } from '../../../../lib/aws/http-get'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { EnrichedEvent } from '../../../../lib/core/enrich/event'
import { F } from '../../../../lib/core/enrich/fields'
import { CURRENCY_COUNT, currencyPlaces } from '../../../../lib/core/enrich/enrichments/currencies'
import { convertAmount, crossRate, CurrencyConversion, decimalOf, ExchangeRates, parseRates, type AccountType } from '../../../../lib/core/enrich/enrichments/currency-conversion'
import type { EnrichmentFailure, StepResult } from '../../../../lib/core/enrich/steps'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { badRows, batch, columns, only, payload, resolver } from '../helpers'
import { json, startServer, type WebServer } from './web-server'

const KEY = 'k3y-0f-the-test'
/** Rates against USD (what a developer account receives). */
const USD_RATES = { USD: 1, EUR: 0.718, GBP: 0.6196, JPY: 81.9, KWD: 0.2813, XYZ: 2 }
/** Rates against EUR (what an enterprise account asking for base=EUR receives). */
const EUR_RATES = { EUR: 1, USD: 1.392758, GBP: 0.862953 }
const DAY = '2011-03-13'
const CO_TSTAMP = '2011-03-13 00:00:00.000'

let oer: WebServer
/** What the server does next, by default answer with the day's rates. */
let behaviour: 'rates' | 'hang' | 'slow' | 'html' | 'garbage' = 'rates'

beforeAll(async () => {
  oer = await startServer(async (_req, res, url) => {
    const m = /^\/api\/historical\/(\d{4}-\d{2}-\d{2})\.json$/.exec(url.pathname)
    if (!m) return json(res, 404, { error: true, status: 404, message: 'not_found', description: 'Client requested a non-existent resource/route.' })
    const appId = url.searchParams.get('app_id')
    if (!appId) return json(res, 401, { error: true, status: 401, message: 'missing_app_id', description: 'No App ID provided.' })
    if (appId !== KEY) return json(res, 401, { error: true, status: 401, message: 'invalid_app_id', description: 'Invalid App ID provided.' })
    const base = url.searchParams.get('base') ?? 'USD'
    if (base !== 'USD' && base !== 'EUR') return json(res, 400, { error: true, status: 400, message: 'invalid_base', description: 'Client requested rates for an unsupported base currency.' })
    if (behaviour === 'hang') return // never answers
    if (behaviour === 'slow') await new Promise((r) => setTimeout(r, 150))
    if (behaviour === 'html') {
      res.writeHead(502, { 'content-type': 'text/html' })
      return void res.end('<html><body>Bad Gateway</body></html>')
    }
    if (behaviour === 'garbage') return json(res, 200, { base: 'USD', rates: { EUR: 'zero point seven' } })
    json(res, 200, {
      disclaimer: 'Usage subject to terms: https://openexchangerates.org/terms',
      license: 'https://openexchangerates.org/license',
      timestamp: Date.parse(`${m[1]}T23:59:59Z`) / 1000,
      base,
      rates: base === 'USD' ? USD_RATES : EUR_RATES,
    })
  })
})
afterAll(() => oer.close())
afterEach(() => {
  behaviour = 'rates'
})

const http = new NodeHttpGet()
afterAll(() => http.close())
const INFO = { schemaKey: 'iglu:com.snowplowanalytics.snowplow/currency_conversion_config/jsonschema/1-0-0', identifier: 'currency-conversion' }

function conversion(o: { apiKey?: string; accountType?: AccountType; base?: string; now?: () => number; timeoutMs?: number } = {}) {
  const base = o.base ?? 'EUR'
  const rates = new ExchangeRates({ http, apiUrl: `${oer.url}/api`, apiKey: o.apiKey ?? KEY, accountType: o.accountType ?? 'DEVELOPER', baseCurrency: base, now: o.now ?? Date.now, timeoutMs: o.timeoutMs })
  return new CurrencyConversion(rates, base, INFO)
}

interface Input {
  tr_currency?: string
  tr_total?: string
  tr_tax?: string
  tr_shipping?: string
  ti_currency?: string
  ti_price?: string
  collector_tstamp?: string
}

async function convert(c: CurrencyConversion, input: Input) {
  const ev = new EnrichedEvent()
  ev.f[F.collector_tstamp] = CO_TSTAMP
  for (const [k, v] of Object.entries(input)) ev.f[F[k as keyof typeof F]] = v
  const r: StepResult = await c.run(ev)
  return { failures: r.failures ?? [], out: [ev.f[F.tr_total_base], ev.f[F.tr_tax_base], ev.f[F.tr_shipping_base], ev.f[F.ti_price_base]], base: ev.f[F.base_currency] }
}

const inputData = (field: string, value: string, expectation: string): EnrichmentFailure => ({ enrichment: INFO, message: { field, value, expectation } })
const simple = (error: string): EnrichmentFailure => ({ enrichment: INFO, message: { error } })

describe('currency conversion: Snowplow’s cases', () => {
  it('fails for an unknown transaction currency, once per amount in it (e1)', async () => {
    const r = await convert(conversion(), { tr_currency: 'RUP', tr_total: '11.00', tr_tax: '1.17', tr_shipping: '0.00', ti_price: '17.99' })
    expect(r.failures).toEqual([0, 1, 2].map(() => inputData('tr_currency', 'RUP', "Unknown currency 'RUP'")))
    expect(r.out).toEqual([null, null, null, null])
    expect(r.base).toBe('EUR')
  })
  it('fails for an unknown item currency (e2)', async () => {
    const r = await convert(conversion(), { tr_total: '12.00', tr_tax: '0.7', tr_shipping: '0.00', ti_currency: 'HUL', ti_price: '1.99' })
    expect(r.failures).toEqual([inputData('ti_currency', 'HUL', "Unknown currency 'HUL'")])
  })
  it('reports the service’s error for a wrong API key (e3)', async () => {
    const r = await convert(conversion({ apiKey: '8A8A8A8A8A8A8A8A8A8A8A8AA8A8A8A8' }), { tr_total: '13.00', tr_tax: '3.67', tr_shipping: '0.00', ti_currency: 'GBP', ti_price: '2.99' })
    expect(r.failures).toEqual([simple('Open Exchange Rates error, type: [OtherErrors], message: [invalid_app_id]')])
    expect(r.out).toEqual([null, null, null, null])
  })
  it('converts nothing when amounts or currencies are absent (e4, e5, e11)', async () => {
    for (const input of [{}, { tr_currency: 'GBP', ti_currency: 'GBP' }, { tr_total: '11.00', tr_tax: '2.67', tr_shipping: '0.00', ti_price: '12.99' }]) {
      expect(await convert(conversion(), input)).toEqual({ failures: [], out: [null, null, null, null], base: 'EUR' })
    }
  })
  it('converts the amounts that have a currency (e6 to e10, e13)', async () => {
    const c = conversion()
    expect((await convert(c, { tr_currency: 'GBP', tr_total: '11.00' })).out).toEqual(['12.75', null, null, null])
    expect((await convert(c, { tr_currency: 'GBP', tr_tax: '2.67', tr_shipping: '0.00' })).out).toEqual([null, '3.09', '0.00', null])
    expect((await convert(c, { ti_currency: 'GBP', ti_price: '12.99' })).out).toEqual([null, null, null, '15.05'])
    expect((await convert(c, { tr_currency: 'GBP', tr_total: '11.00', tr_tax: '2.67', tr_shipping: '0.00' })).out).toEqual(['12.75', '3.09', '0.00', null])
    expect((await convert(c, { tr_total: '14.00', tr_tax: '4.67', tr_shipping: '0.00', ti_currency: 'GBP', ti_price: '10.99' })).out).toEqual([null, null, null, '12.74'])
    expect((await convert(c, { tr_currency: 'GBP', tr_total: '16.00', tr_tax: '2.67', tr_shipping: '0.00', ti_price: '10.00' })).out).toEqual(['18.54', '3.09', '0.00', null])
  })
  it('keeps amounts in the base currency, rounded to its minor units, without asking the service (e12)', async () => {
    const before = oer.seen.length
    const r = await convert(conversion(), { tr_currency: 'EUR', tr_total: '11.00', tr_tax: '2.67', tr_shipping: '0.00', ti_currency: 'EUR', ti_price: '12.99' })
    expect(r.out).toEqual(['11.00', '2.67', '0.00', '12.99'])
    expect(oer.seen.length).toBe(before)
  })
})

describe('currency conversion: the service', () => {
  it('asks for the collector day’s historical rates, with the base only for enterprise and unlimited accounts', async () => {
    const before = oer.seen.length
    await convert(conversion(), { tr_currency: 'GBP', tr_total: '1', collector_tstamp: '2011-03-13 23:59:59.999' })
    await convert(conversion({ accountType: 'ENTERPRISE' }), { tr_currency: 'GBP', tr_total: '1', collector_tstamp: '2011-03-14 00:00:00.000' })
    const seen = oer.seen.slice(before)
    expect(seen.map((s) => [s.path, s.query.get('app_id'), s.query.get('base')])).toEqual([
      [`/api/historical/${DAY}.json`, KEY, null],
      ['/api/historical/2011-03-14.json', KEY, 'EUR'],
    ])
  })
  it('converts with the rates against the base currency for enterprise accounts', async () => {
    // 1 / 0.862953 = 1.158811 (6 places) → 11 GBP = 12.746921 EUR
    const r = await convert(conversion({ accountType: 'UNLIMITED' }), { tr_currency: 'GBP', tr_total: '11', ti_currency: 'USD', ti_price: '100' })
    expect(r).toEqual({ failures: [], out: ['12.75', null, null, '71.80'], base: 'EUR' })
  })
  it('rounds to the base currency’s minor units (JPY 0, KWD 3)', async () => {
    expect((await convert(conversion({ base: 'JPY' }), { tr_currency: 'GBP', tr_total: '10' })).out[0]).toBe('1322')
    expect((await convert(conversion({ base: 'KWD' }), { tr_currency: 'GBP', tr_total: '10' })).out[0]).toBe('4.540')
  })
  it('names a currency the service has no rate for', async () => {
    const r = await convert(conversion(), { tr_currency: 'CHF', tr_total: '10' })
    expect(r.failures).toEqual([simple('Open Exchange Rates error, type: [IllegalCurrency], message: [Currency not found in the API, invalid currency CHF]')])
  })
  it('refuses days before 1999 and after today without asking', async () => {
    const before = oer.seen.length
    const old = await convert(conversion(), { tr_currency: 'GBP', tr_total: '10', collector_tstamp: '1998-12-31 23:00:00.000' })
    expect(old.failures).toEqual([simple('Open Exchange Rates error, type: [ResourcesNotAvailable], message: [Exchange rate unavailable on the date [1998-12-31T00:00Z[UTC]]]')])
    const later = await convert(conversion({ now: () => Date.parse('2011-03-12T12:00:00Z') }), { tr_currency: 'GBP', tr_total: '10' })
    expect(later.failures[0]!.message).toEqual({ error: expect.stringContaining('type: [ResourcesNotAvailable], message: [Exchange rate unavailable on the date [2011-03-13T00:00Z[UTC]]]') })
    expect(oer.seen.length).toBe(before)
  })
  it('reports answers that are not rates', async () => {
    behaviour = 'html'
    expect((await convert(conversion(), { tr_currency: 'GBP', tr_total: '1' })).failures[0]!.message).toEqual({ error: expect.stringMatching(/^Open Exchange Rates error, type: \[OtherErrors\], message: \[OER response is not JSON: .* \(HTTP 502\)\]$/) })
    behaviour = 'garbage'
    expect((await convert(conversion(), { tr_currency: 'GBP', tr_total: '1' })).failures[0]!.message).toEqual({ error: "Open Exchange Rates error, type: [OtherErrors], message: [OER response couldn't be decoded (rate of EUR is not a number)]" })
    const wrongPath = new ExchangeRates({ http, apiUrl: `${oer.url}/nothing-here`, apiKey: KEY, accountType: 'DEVELOPER', baseCurrency: 'EUR', now: Date.now })
    expect(await wrongPath.day(Date.UTC(2011, 2, 13))).toEqual({ type: 'OtherErrors', message: 'not_found' })
  })
  it('turns a network client that throws into a failure', async () => {
    const broken = { get: () => Promise.reject(new Error('socket hang up')) }
    const c = new CurrencyConversion(new ExchangeRates({ http: broken, apiUrl: oer.url, apiKey: KEY, accountType: 'DEVELOPER', baseCurrency: 'EUR', now: Date.now }), 'EUR', INFO)
    expect((await convert(c, { tr_currency: 'GBP', tr_total: '1' })).failures).toEqual([simple('Open Exchange Rates error, type: [OtherErrors], message: [OER request failed: socket hang up]')])
  })
  it('gives up on a service that does not answer in time, and waits for a slow one', async () => {
    behaviour = 'hang'
    const t0 = Date.now()
    const r = await convert(conversion({ timeoutMs: 100 }), { tr_currency: 'GBP', tr_total: '1', ti_currency: 'GBP', ti_price: '2' })
    expect(Date.now() - t0).toBeLessThan(2000)
    expect(r.failures).toEqual([0, 1].map(() => simple('Open Exchange Rates error, type: [OtherErrors], message: [OER request failed: no answer within 100 ms]')))
    behaviour = 'slow'
    expect((await convert(conversion({ timeoutMs: 2000 }), { tr_currency: 'GBP', tr_total: '11' })).out[0]).toBe('12.75')
  })
  it('fetches a day once: concurrent events share the request, later ones use the kept rates synchronously', async () => {
    const c = conversion()
    const before = oer.seen.length
    const results = await Promise.all(Array.from({ length: 20 }, () => convert(c, { tr_currency: 'GBP', tr_total: '11' })))
    expect(results.every((r) => r.out[0] === '12.75')).toBe(true)
    expect(oer.seen.length - before).toBe(1)
    const ev = new EnrichedEvent()
    ev.f[F.collector_tstamp] = '2011-03-13 18:30:00.000'
    ev.f[F.tr_currency] = 'GBP'
    ev.f[F.tr_total] = '16'
    expect(c.run(ev)).toEqual({})
    expect(ev.f[F.tr_total_base]).toBe('18.54')
    expect(c.rates.requests).toBe(1)
  })
  it('keeps the current day’s rates for an hour, a past day’s for good', async () => {
    let now = Date.parse('2011-03-13T10:00:00Z')
    const c = conversion({ now: () => now })
    await convert(c, { tr_currency: 'GBP', tr_total: '1' })
    now += 59 * 60_000
    await convert(c, { tr_currency: 'GBP', tr_total: '1' })
    expect(c.rates.requests).toBe(1)
    now += 2 * 60_000
    await convert(c, { tr_currency: 'GBP', tr_total: '1' })
    expect(c.rates.requests).toBe(2)
    now = Date.parse('2011-03-14T00:00:01Z')
    await convert(c, { tr_currency: 'GBP', tr_total: '1' })
    now += 30 * 86_400_000
    await convert(c, { tr_currency: 'GBP', tr_total: '1' })
    expect(c.rates.requests).toBe(3)
  })
})

describe('currency conversion: arithmetic', () => {
  it('reads the amount as its exact double and rounds half-even', () => {
    expect(convertAmount(12.99, undefined, 2)).toBe('12.99')
    expect(convertAmount(0.125, undefined, 2)).toBe('0.12')
    expect(convertAmount(0.375, undefined, 2)).toBe('0.38')
    expect(convertAmount(2.675, undefined, 2)).toBe('2.67') // 2.67499999999999982236431605997495353221893310546875
    expect(convertAmount(-1.005, undefined, 2)).toBe('-1.00')
    expect(convertAmount(-0.001, undefined, 2)).toBe('0.00')
    expect(convertAmount(1e21, undefined, 0)).toBe('1000000000000000000000')
    expect(convertAmount(5e-324, undefined, 2)).toBe('0.00')
    expect(convertAmount(10, decimalOf(1.5), 0)).toBe('15')
    expect(convertAmount(2.5, decimalOf(1), 0)).toBe('2')
  })
  it('computes the cross rate as Snowplow does: 1 / rate(from) to 6 places, times rate(to)', () => {
    const t = parseRates(200, JSON.stringify({ base: 'USD', rates: USD_RATES }))
    if ('type' in t) throw new Error(t.message)
    expect(crossRate(t, 'GBP', 'EUR')).toEqual({ n: 1613944n * 718n, s: 9 })
    expect(crossRate(parseRates(200, '{"rates":{"EUR":0,"USD":1}}') as never, 'EUR', 'USD')).toBe('Division by zero')
    expect(decimalOf(1.7236947e-5)).toEqual({ n: 17236947n, s: 12 })
    expect(decimalOf(1e21)).toEqual({ n: 10n ** 21n, s: 0 })
  })
  it('knows the ISO 4217 codes and their minor units', () => {
    expect([currencyPlaces('EUR'), currencyPlaces('JPY'), currencyPlaces('KWD'), currencyPlaces('CLF'), currencyPlaces('XAU'), currencyPlaces('eur'), currencyPlaces('RUP')]).toEqual([2, 0, 3, 4, 0, undefined, undefined])
    expect(CURRENCY_COUNT).toBeGreaterThan(200)
  })
  it('fails for an amount that is not finite', async () => {
    const r = await convert(conversion(), { tr_currency: 'GBP', tr_total: '1e400' })
    expect(r.failures).toEqual([simple('an error happened while converting the currency: Infinite or NaN')])
  })
})

const config = (parameters: object) => ({
  schema: 'iglu:com.snowplowanalytics.snowplow/currency_conversion_config/jsonschema/1-0-0',
  data: { vendor: 'com.snowplowanalytics.snowplow', name: 'currency_conversion_config', enabled: true, parameters },
})
const params = (extra: object = {}) => ({ accountType: 'DEVELOPER', apiKey: KEY, baseCurrency: 'EUR', rateAt: 'EOD_PRIOR', ...extra })
const noAssets = { path: (l: string) => { throw new Error(`no asset ${l}`) } }

async function build(doc: object) {
  const r = await loadEnrichmentConfigs([{ source: 'currency.json', text: JSON.stringify(doc) }], resolver)
  if (!r.ok) return r
  return buildEnrichments(r.configs, { assets: noAssets, legacyOrder: false, web: { http } })
}

describe('currency conversion: configuration', () => {
  it('accepts apiUrl besides Snowplow’s parameters, and checks it', async () => {
    expect(await build(config(params({ apiUrl: `${oer.url}/api/` })))).toMatchObject({ ok: true, enrichments: [{ id: 'currency-conversion', order: 7 }] })
    expect(await build(config(params()))).toMatchObject({ ok: true })
    expect(await build(config(params({ apiUrl: 'ftp://example.com/api' })))).toEqual({ ok: false, errors: ['currency.json: apiUrl must be an http:// or https:// URL, not ftp://'] })
    expect(await build(config(params({ apiUrl: 42 })))).toEqual({ ok: false, errors: ['currency.json: apiUrl must be a string (an http:// or https:// URL)'] })
  })
  it('still validates the rest against the schema', async () => {
    expect(await build(config(params({ apiUrl: oer.url, cacheSize: 3 })))).toMatchObject({ ok: false, errors: [expect.stringMatching(/^currency\.json: invalid against iglu:com\.snowplowanalytics\.snowplow\/currency_conversion_config\/jsonschema\/1-0-0: /)] })
    expect(await build(config(params({ rateAt: 'NOW' })))).toMatchObject({ ok: false, errors: [expect.stringMatching(/^currency\.json: invalid against /)] })
  })
  it('refuses an unknown base currency and a runtime without network access', async () => {
    expect(await build(config(params({ baseCurrency: 'EURO' })))).toEqual({ ok: false, errors: ["currency.json: baseCurrency: Unknown currency 'EURO' (an ISO 4217 code in capitals, e.g. USD)"] })
    const r = await loadEnrichmentConfigs([{ source: 'currency.json', text: JSON.stringify(config(params())) }], resolver)
    expect(r.ok && (await buildEnrichments(r.configs, { assets: noAssets, legacyOrder: false }))).toEqual({ ok: false, errors: ['currency.json: the currency conversion enrichment reads Open Exchange Rates, and this runtime gives enrichments no network access'] })
  })
})

describe('currency conversion in enriched events', () => {
  it('writes base_currency and the *_base columns, and fails events the service cannot convert', async () => {
    const built = await build(config(params({ apiUrl: `${oer.url}/api` })))
    if (!built.ok) throw new Error(built.errors.join())
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const at = Date.UTC(2011, 2, 13, 10, 0)
    const run = async (q: string) => e.enrichRecord(payload({ path: '/i', querystring: `p=web&tv=js-3&${q}`, timestamp: at }), batch())
    const tsv = (o: Awaited<ReturnType<typeof run>>) => columns((only(o, 'good')[0] as { tsv: string }).tsv)
    const tr = tsv(await run('e=tr&tr_id=order-1&tr_tt=11&tr_tx=2.67&tr_sh=0&tr_cu=GBP'))
    expect([tr.tr_total, tr.tr_total_base, tr.tr_tax_base, tr.tr_shipping_base, tr.base_currency, tr.ti_price_base]).toEqual(['11', '12.75', '3.09', '0.00', 'EUR', ''])
    const ti = tsv(await run('e=ti&ti_id=order-1&ti_sk=sku-1&ti_pr=12.99&ti_qu=1&ti_cu=GBP'))
    expect([ti.ti_price_base, ti.base_currency]).toEqual(['15.05', 'EUR'])
    const pv = tsv(await run('e=pv'))
    expect([pv.base_currency, pv.tr_total_base]).toEqual(['EUR', ''])
    const bad = await run('e=tr&tr_id=order-2&tr_tt=5&tr_cu=RUP')
    expect(only(bad, 'good')).toEqual([])
    const row = badRows(bad)[0]
    expect(row.schema).toMatch(/enrichment_failures/)
    expect(row.data.failure.messages).toEqual([{ enrichment: { schemaKey: INFO.schemaKey, identifier: 'currency-conversion' }, message: { field: 'tr_currency', value: 'RUP', expectation: "Unknown currency 'RUP'" } }])
  })
})
