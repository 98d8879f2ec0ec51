/**
 * `weather_enrichment_config` against a local server answering as
 * OpenWeatherMap's history API does (`/data/2.5/history/city`, hourly stamps
 * in Kelvin, its error answers), with the cases of Snowplow's
 * WeatherEnrichmentSpec (2020-04-28T12:00Z at 20.713052, 70.98224; humidity 69).
 */
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { NodeHttpGet } from '../../../../lib/aws/http-get'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { EnrichedEvent } from '../../../../lib/core/enrich/event'
import { F } from '../../../../lib/core/enrich/fields'
import { ORDER } from '../../../../lib/core/enrich/enrichments/module'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { parseHistory, roundCoordinate, WEATHER_ERROR_HOLD_MS, WEATHER_SCHEMA, WeatherEnrichment, WeatherHistory } from '../../../../lib/core/enrich/enrichments/weather'
import type { StepResult } from '../../../../lib/core/enrich/steps'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { projectRoot } from '../../../../lib/local/handlers'
import { badRows, batch, columns, only, payload, resolver } from '../helpers'
import { json, startServer, type WebServer } from './web-server'

const KEY = 'owm-test-key'
const DAY_START = Date.UTC(2020, 3, 28) / 1000

/** The day's 24 hourly stamps, as the history API sends them (with fields the context does not keep, such as feels_like). */
function history(start: number) {
  return {
    message: 'Count: 24',
    cod: '200',
    city_id: 1270642,
    calctime: 0.0123,
    cnt: 24,
    list: Array.from({ length: 24 }, (_, h) => ({
      dt: start + h * 3600,
      main: { temp: 300 + h / 10, feels_like: 301.5, pressure: 1008, humidity: h === 12 ? 69 : 50 + h, temp_min: 299.5, temp_max: 301.25, ...(h === 3 ? { sea_level: 1009, grnd_level: 1001 } : {}) },
      wind: { speed: 4.1, deg: 250, ...(h === 12 ? { gust: 7.2 } : {}) },
      clouds: { all: h === 12 ? 20 : 0 },
      weather: [h === 12 ? { id: 801, main: 'Clouds', description: 'few clouds', icon: '02d' } : { id: 800, main: 'Clear', description: 'clear sky', icon: '01n' }],
      ...(h === 12 ? { rain: { '1h': 0.25 } } : {}),
    })),
  }
}

let owm: WebServer
let behaviour: 'history' | 'hang' | 'slow' | 'empty' | 'text' | 'cod-error' | 'not-found' = 'history'
beforeAll(async () => {
  owm = await startServer(async (_req, res, url) => {
    if (url.pathname !== '/data/2.5/history/city') return json(res, 404, { cod: '404', message: 'Internal error' })
    if (url.searchParams.get('appid') !== KEY) return json(res, 401, { cod: 401, message: 'Invalid API key. Please see https://openweathermap.org/faq#error401 for more info.' })
    if (behaviour === 'hang') return
    if (behaviour === 'slow') await new Promise((r) => setTimeout(r, 150))
    if (behaviour === 'not-found') return json(res, 404, { cod: '404', message: 'city not found' })
    if (behaviour === 'cod-error') return json(res, 200, { cod: '400', message: 'requested time is out of allowed range' })
    if (behaviour === 'text') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      return void res.end('upstream says no')
    }
    json(res, 200, behaviour === 'empty' ? { ...history(0), cnt: 0, list: [] } : history(Number(url.searchParams.get('start'))))
  })
})
afterAll(() => owm.close())
afterEach(() => {
  behaviour = 'history'
})

const http = new NodeHttpGet()
afterAll(() => http.close())
const INFO = { schemaKey: 'iglu:com.snowplowanalytics.snowplow.enrichments/weather_enrichment_config/jsonschema/1-0-0', identifier: 'weather' }

function enrichment(o: { apiKey?: string; cacheSize?: number; geoPrecision?: number; now?: () => number; timeoutMs?: number } = {}) {
  const h = new WeatherHistory({ http, baseUrl: owm.url, apiKey: o.apiKey ?? KEY, timeoutMs: o.timeoutMs ?? 2000, cacheSize: o.cacheSize ?? 5200, geoPrecision: o.geoPrecision ?? 1, now: o.now ?? Date.now })
  return new WeatherEnrichment(h, INFO)
}

async function lookup(w: WeatherEnrichment, lat: number | null, lon: number | null, t: string | null = '2020-04-28 12:00:00.000'): Promise<StepResult> {
  const ev = new EnrichedEvent()
  ev.f[F.geo_latitude] = lat
  ev.f[F.geo_longitude] = lon
  ev.f[F.derived_tstamp] = t
  return w.run(ev)
}
const data = (r: StepResult) => {
  if (r.failures?.length) throw new Error(JSON.stringify(r.failures))
  expect(r.contexts!.map((c) => c.schema)).toEqual([WEATHER_SCHEMA])
  return JSON.parse(r.contexts![0]!.data)
}
const error = (error: string) => ({ failures: [{ enrichment: INFO, message: { error } }] })

describe('weather: Snowplow’s cases', () => {
  it('fails for a missing time, naming each missing input (e1)', async () => {
    expect(await lookup(enrichment(), 70.98224, 70.98224, null)).toEqual({ failures: [{ enrichment: INFO, message: { field: 'derived_tstamp', value: null, expectation: 'missing' } }] })
    expect((await lookup(enrichment(), null, null, null)).failures!.map((f) => (f.message as { field: string }).field)).toEqual(['geo_latitude', 'geo_longitude', 'derived_tstamp'])
  })
  it('fails for an invalid key (e3)', async () => {
    expect(await lookup(enrichment({ apiKey: 'KEY' }), 20.713052, 70.98224)).toEqual(error('Check your API key'))
  })
  it('gives the stamp of the event’s hour: humidity, and dt as an ISO timestamp (e2, e4, e6)', async () => {
    expect(data(await lookup(enrichment(), 20.713052, 70.98224))).toEqual({
      main: { humidity: 69, pressure: 1008, temp: 301.2, temp_min: 299.5, temp_max: 301.25 },
      wind: { speed: 4.1, deg: 250, gust: 7.2 },
      clouds: { all: 20 },
      rain: { '1h': 0.25 },
      weather: [{ main: 'Clouds', description: 'few clouds', id: 801, icon: '02d' }],
      dt: '2020-04-28T12:00:00.000Z',
    })
  })
})

describe('weather: the service', () => {
  it('asks for the day’s hourly history at the event’s coordinates', async () => {
    const before = owm.seen.length
    await lookup(enrichment(), 20.713052, 70.98224, '2020-04-28 23:59:59.999')
    const s = owm.seen.slice(before)
    expect(s.map((x) => [x.path, Object.fromEntries(x.query)])).toEqual([
      ['/data/2.5/history/city', { appid: KEY, lat: '20.713052', lon: '70.98224', start: String(DAY_START), end: String(DAY_START + 86400), cnt: '24' }],
    ])
  })
  it('picks the nearest stamp (the earlier one on a tie), keeping the fields in the schema’s', async () => {
    const w = enrichment()
    expect(data(await lookup(w, 20.7, 70.9, '2020-04-28 12:29:59.999')).dt).toBe('2020-04-28T12:00:00.000Z')
    expect(data(await lookup(w, 20.7, 70.9, '2020-04-28 12:30:00.000')).dt).toBe('2020-04-28T12:00:00.000Z')
    expect(data(await lookup(w, 20.7, 70.9, '2020-04-28 12:30:01.000')).dt).toBe('2020-04-28T13:00:00.000Z')
    const three = data(await lookup(w, 20.7, 70.9, '2020-04-28 03:10:00.000'))
    expect(Object.keys(three.main)).toEqual(['grnd_level', 'humidity', 'pressure', 'sea_level', 'temp', 'temp_min', 'temp_max'])
    expect(three).not.toHaveProperty('rain')
    expect(three.wind).toEqual({ speed: 4.1, deg: 250 })
  })
  it('asks once per day and cell: nearby events share the answer, concurrent ones the request', async () => {
    const w = enrichment()
    const all = await Promise.all([20.713052, 20.9, 21.2, 20.6].map((lat) => lookup(w, lat, 70.98224)))
    expect(all.every((r) => data(r).dt === '2020-04-28T12:00:00.000Z')).toBe(true)
    expect(w.history.requests).toBe(1)
    const ev = new EnrichedEvent()
    ev.f[F.geo_latitude] = 20.8
    ev.f[F.geo_longitude] = 71.1
    ev.f[F.derived_tstamp] = '2020-04-28 15:00:00.000'
    const sync = w.run(ev) as StepResult
    expect(JSON.parse(sync.contexts![0]!.data).dt).toBe('2020-04-28T15:00:00.000Z')
    await lookup(w, 20.4, 70.98224) // another cell
    await lookup(w, 20.713052, 70.98224, '2020-04-29 01:00:00.000') // another day
    expect(w.history.requests).toBe(3)
  })
  it('keeps cacheSize cells, dropping the least recently used', async () => {
    const w = enrichment({ cacheSize: 2 })
    await lookup(w, 10, 10)
    await lookup(w, 20, 20)
    await lookup(w, 10, 10) // 10,10 is now the most recent
    await lookup(w, 30, 30) // drops 20,20
    expect(w.history.requests).toBe(3)
    await lookup(w, 10, 10)
    expect(w.history.requests).toBe(3)
    await lookup(w, 20, 20)
    expect(w.history.requests).toBe(4)
  })
  it('rounds cells as Snowplow does: to 1/geoPrecision of a degree, then one decimal', () => {
    expect([roundCoordinate(20.713052, 1), roundCoordinate(20.49, 1), roundCoordinate(-20.5, 1), roundCoordinate(-20.51, 1)]).toEqual([21, 20, -20, -21])
    expect([roundCoordinate(20.713052, 2), roundCoordinate(20.76, 2), roundCoordinate(20.713052, 4), roundCoordinate(-0.2, 4)]).toEqual([20.5, 21, 20.8, -0.3])
    expect([roundCoordinate(20.713052, 10), roundCoordinate(20.713052, 3), roundCoordinate(70.98224, 8)]).toEqual([20.7, 20.7, 71])
  })
  it('reports the service’s errors and answers that are no history', async () => {
    behaviour = 'not-found'
    expect(await lookup(enrichment(), 1, 1)).toEqual(error('Request failed with status 404'))
    behaviour = 'cod-error'
    expect(await lookup(enrichment(), 1, 1)).toEqual(error('requested time is out of allowed range'))
    behaviour = 'empty'
    expect(await lookup(enrichment(), 1, 1)).toEqual(error('Server response has no weather stamps'))
    behaviour = 'text'
    expect((await lookup(enrichment(), 1, 1)).failures![0]!.message).toEqual({ error: expect.stringMatching(/^OpenWeatherMap Error when trying to parse following json: \nupstream says no\n\nMessage from the parser:\n /) })
    expect(parseHistory(200, JSON.stringify({ list: [{ dt: 1, main: { temp: 1 }, wind: { speed: 1, deg: 1 }, clouds: { all: 1 } }] }))).toEqual({ error: 'Could not extract the weather history from the answer: list[0].main.humidity is missing' })
    expect(parseHistory(200, JSON.stringify({ list: [{ dt: 1.5 }] }))).toEqual({ error: 'Could not extract the weather history from the answer: list[0].main is missing' })
    const far = { dt: 1e17, main: { temp: 1, humidity: 1, pressure: 1, temp_min: 1, temp_max: 1 }, wind: { speed: 1, deg: 1 }, clouds: { all: 1 } }
    expect(parseHistory(200, JSON.stringify({ list: [far] }))).toEqual({ error: 'Could not extract the weather history from the answer: Invalid time value' })
  })
  it('keeps an error for a minute, and a timeout not at all', async () => {
    let now = Date.parse('2024-01-01T00:00:00Z')
    behaviour = 'not-found'
    const w = enrichment({ now: () => now })
    await lookup(w, 1, 1)
    behaviour = 'history'
    expect(await lookup(w, 1, 1)).toEqual(error('Request failed with status 404'))
    now += WEATHER_ERROR_HOLD_MS + 1
    expect(data(await lookup(w, 1, 1)).dt).toBe('2020-04-28T12:00:00.000Z')
    expect(w.history.requests).toBe(2)

    behaviour = 'hang'
    const t = enrichment({ timeoutMs: 100 })
    const t0 = Date.now()
    expect(await lookup(t, 1, 1)).toEqual(error('OpenWeatherMap request failed: no answer within 100 ms'))
    expect(Date.now() - t0).toBeLessThan(2000)
    behaviour = 'history'
    expect(data(await lookup(t, 1, 1)).dt).toBe('2020-04-28T12:00:00.000Z')
    expect(t.history.requests).toBe(2)
  })
  it('waits for a slow answer within the timeout', async () => {
    behaviour = 'slow'
    const w = enrichment({ timeoutMs: 2000 })
    expect(data(await lookup(w, 1, 1)).dt).toBe('2020-04-28T12:00:00.000Z')
  })
})

const config = (parameters: object) => ({
  schema: 'iglu:com.snowplowanalytics.snowplow.enrichments/weather_enrichment_config/jsonschema/1-0-0',
  data: { vendor: 'com.snowplowanalytics.snowplow.enrichments', name: 'weather_enrichment_config', enabled: true, parameters },
})
const params = (extra: object = {}) => ({ apiKey: KEY, cacheSize: 5100, geoPrecision: 1, apiHost: 'history.openweathermap.org', timeout: 5, ...extra })
const noAssets = { path: (l: string) => { throw new Error(`no asset ${l}`) } }

async function build(doc: object) {
  const r = await loadEnrichmentConfigs([{ source: 'weather.json', text: JSON.stringify(doc) }], resolver)
  if (!r.ok) return r
  return buildEnrichments(r.configs, { assets: noAssets, legacyOrder: false, web: { http } })
}

describe('weather: configuration', () => {
  it('runs after IP lookups with runAfterIpLookups, reading their coordinates', async () => {
    const ip = { schema: 'iglu:com.snowplowanalytics.snowplow/ip_lookups/jsonschema/2-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'ip_lookups', enabled: true, parameters: { geo: { uri: 'file:///maxmind', database: 'GeoLite2-City.mmdb' } } } }
    const docs = [ip, config(params({ apiUrl: owm.url, runAfterIpLookups: true }))]
    const r = await loadEnrichmentConfigs(docs.map((d, i) => ({ source: `c${i}.json`, text: JSON.stringify(d) })), resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: { path: () => join(projectRoot, 'test/fixtures/maxmind/GeoIP2-City-Test.mmdb') }, legacyOrder: false, web: { http } })
    if (!built.ok) throw new Error(built.errors.join())
    expect(built.enrichments.map((e) => [e.id, e.order])).toEqual([['ip-lookups', ORDER.ipLookups], ['weather', ORDER.ipLookups + 0.05]])
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const before = owm.seen.length
    const o = await e.enrichRecord(payload({ path: '/i', querystring: 'e=pv&p=web&tv=js-3', ipAddress: '175.16.199.0', timestamp: Date.UTC(2020, 3, 28, 12, 10) }), batch())
    const c = columns((only(o, 'good')[0] as { tsv: string }).tsv)
    expect(JSON.parse(c.derived_contexts).data.map((d: { schema: string }) => d.schema)).toEqual([WEATHER_SCHEMA])
    expect(owm.seen.slice(before).map((x) => [x.query.get('lat'), x.query.get('lon')])).toEqual([['43.88', '125.3228']])
    expect(await build(config(params({ runAfterIpLookups: 'yes' })))).toEqual({ ok: false, errors: ['weather.json: runAfterIpLookups must be true or false'] })
  })

  it('accepts Snowplow’s parameters and apiUrl, and refuses a URL in apiHost', async () => {
    expect(await build(config(params()))).toMatchObject({ ok: true, enrichments: [{ id: 'weather', order: ORDER.weather }] })
    expect(await build(config(params({ apiUrl: owm.url })))).toMatchObject({ ok: true })
    expect(await build(config(params({ apiHost: 'https://history.openweathermap.org' })))).toEqual({
      ok: false,
      errors: ['weather.json: apiHost must be a host name such as history.openweathermap.org, got "https://history.openweathermap.org" (a full URL goes in apiUrl)'],
    })
    expect(await build(config(params({ apiUrl: 'history.example.com' })))).toEqual({ ok: false, errors: ['weather.json: apiUrl is not a URL: "history.example.com"'] })
    expect(await build(config(params({ geoPrecision: 0 })))).toMatchObject({ ok: false, errors: [expect.stringMatching(/^weather\.json: invalid against /)] })
  })
})

describe('weather in enriched events', () => {
  it('adds the weather context to events with coordinates, and fails the others', async () => {
    const built = await build(config(params({ apiUrl: owm.url })))
    if (!built.ok) throw new Error(built.errors.join())
    // IP lookups run after the weather step (step 15) in Snowplow's order: here a step before it provides the coordinates.
    const coordinates = {
      id: 'test-coordinates',
      order: ORDER.weather - 0.5,
      run(ev: EnrichedEvent) {
        if (ev.f[F.user_id] === 'located') {
          ev.f[F.geo_latitude] = 20.713052
          ev.f[F.geo_longitude] = 70.98224
        }
        return {}
      },
    }
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: [...built.enrichments, coordinates] })
    const at = Date.UTC(2020, 3, 28, 12, 10)
    const run = (q: string) => e.enrichRecord(payload({ path: '/i', querystring: `e=pv&p=web&tv=js-3&${q}`, timestamp: at }), batch())
    const good = only(await run('uid=located'), 'good')
    expect(good).toHaveLength(1)
    const c = columns((good[0] as { tsv: string }).tsv)
    const derived = JSON.parse(c.derived_contexts).data
    expect(derived).toEqual([{ schema: WEATHER_SCHEMA, data: expect.objectContaining({ dt: '2020-04-28T12:00:00.000Z', main: expect.objectContaining({ humidity: 69 }) }) }])
    const failed = await run('uid=elsewhere')
    expect(only(failed, 'good')).toEqual([])
    expect(badRows(failed)[0].data.failure.messages).toEqual([
      { enrichment: INFO, message: { field: 'geo_latitude', value: null, expectation: 'missing' } },
      { enrichment: INFO, message: { field: 'geo_longitude', value: null, expectation: 'missing' } },
    ])
  })
})

describe('currency conversion and weather together', () => {
  it('converts a transaction and adds the weather where IP lookups placed it, in one enriched event', async () => {
    const oer = await startServer((_req, res, url) =>
      url.pathname === '/api/historical/2020-04-28.json' && url.searchParams.get('app_id') === 'oer-key'
        ? json(res, 200, { disclaimer: '…', license: '…', timestamp: 1588118399, base: 'USD', rates: { USD: 1, EUR: 0.923, GBP: 0.8042 } })
        : json(res, 404, { error: true, status: 404, message: 'not_found', description: '…' }),
    )
    try {
      const docs = [
        { schema: 'iglu:com.snowplowanalytics.snowplow/ip_lookups/jsonschema/2-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'ip_lookups', enabled: true, parameters: { geo: { uri: 'file:///maxmind', database: 'GeoLite2-City.mmdb' } } } },
        config(params({ apiUrl: owm.url, runAfterIpLookups: true })),
        { schema: 'iglu:com.snowplowanalytics.snowplow/currency_conversion_config/jsonschema/1-0-0', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'currency_conversion_config', enabled: true, parameters: { accountType: 'DEVELOPER', apiKey: 'oer-key', baseCurrency: 'EUR', rateAt: 'EOD_PRIOR', apiUrl: `${oer.url}/api` } } },
      ]
      const r = await loadEnrichmentConfigs(docs.map((d, i) => ({ source: `c${i}.json`, text: JSON.stringify(d) })), resolver)
      if (!r.ok) throw new Error(r.errors.join())
      const built = await buildEnrichments(r.configs, { assets: { path: () => join(projectRoot, 'test/fixtures/maxmind/GeoIP2-City-Test.mmdb') }, legacyOrder: false, web: { http } })
      if (!built.ok) throw new Error(built.errors.join())
      const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
      const q = 'e=tr&p=web&tv=js-3&tr_id=order-7&tr_tt=100&tr_tx=20&tr_sh=4.5&tr_cu=GBP'
      const o = await e.enrichRecord(payload({ path: '/i', querystring: q, ipAddress: '175.16.199.0', timestamp: Date.UTC(2020, 3, 28, 18, 40) }), batch())
      const c = columns((only(o, 'good')[0] as { tsv: string }).tsv)
      // 1 / 0.8042 = 1.243472 (6 places) × 0.923 = 1.147724656
      expect([c.tr_total_base, c.tr_tax_base, c.tr_shipping_base, c.base_currency]).toEqual(['114.77', '22.95', '5.16', 'EUR'])
      expect([c.geo_city, c.geo_latitude, c.geo_longitude]).toEqual(['Changchun', '43.88', '125.3228'])
      const derived = JSON.parse(c.derived_contexts).data
      expect(derived).toEqual([{ schema: WEATHER_SCHEMA, data: expect.objectContaining({ dt: '2020-04-28T19:00:00.000Z' }) }])
    } finally {
      await oer.close()
    }
  })
})
