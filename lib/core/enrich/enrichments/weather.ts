/**
 * `weather_enrichment_config`: the `org.openweathermap/weather` context of
 * the weather at the event's place (`geo_latitude`, `geo_longitude`) and time
 * (`derived_tstamp`), from OpenWeatherMap's history API, as Snowplow does:
 * one request per UTC day and cache cell (`/data/2.5/history/city?appid=…&lat=…
 * &lon=…&start=<day start>&end=<next day start>&cnt=24`, the hourly stamps of
 * the day), the stamp nearest the event's time picked from it. Cells are the
 * coordinates rounded to `1 / geoPrecision` of a degree, then to one decimal
 * (Snowplow's rounding); `cacheSize` cells are kept (least recently used go).
 */
import { toIgluUri } from '../../iglu/keys'
import { parseTimestamp } from '../convert'
import type { EnrichedEvent } from '../event'
import { F } from '../fields'
import type { Enrichment, EnrichmentFailure, StepResult } from '../steps'
import { baseUrl, checkBaseUrl, type HttpGet } from './http-get'
import { ConfigError, orderOf, type EnrichmentModule } from './module'

export const WEATHER_SCHEMA = 'iglu:org.openweathermap/weather/jsonschema/1-0-0'
const DAY = 86_400_000
/** How long an error (other than a timeout, never kept) answers for its cell before the service is asked again. */
export const WEATHER_ERROR_HOLD_MS = 60_000

/** A coordinate's cache cell, as Snowplow's weather client rounds it (single-precision, then one decimal half-up). */
export function roundCoordinate(c: number, geoPrecision: number): number {
  const r = Math.fround(Math.round(Math.fround(Math.fround(c) * geoPrecision)) / geoPrecision)
  const tenths = Math.round(Math.abs(r) * 10) / 10
  return r < 0 ? -tenths : tenths
}

/** One hourly stamp: its time (epoch seconds) and the context data it gives. */
interface Stamp {
  readonly dt: number
  readonly data: string
}

export interface WeatherError {
  readonly error: string
  /** A timeout: not kept, the next event asks again. */
  readonly timeout?: boolean
}

const isError = (x: readonly Stamp[] | WeatherError): x is WeatherError => !Array.isArray(x)

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The stamp's context data: known fields only, in Snowplow's order; absent optional fields left out. */
function stampData(s: unknown, at: string): Stamp | string {
  if (!isObj(s)) return `${at} is not an object`
  const num = (o: Json, k: string, where: string, required: boolean): string | undefined | null => {
    const v = o[k]
    if (v === undefined || v === null) return required ? `${where}.${k} is missing` : null
    return typeof v === 'number' && Number.isFinite(v) ? undefined : `${where}.${k} is not a number`
  }
  const int = (o: Json, k: string, where: string, required: boolean): string | undefined | null => {
    const e = num(o, k, where, required)
    return e === undefined && !Number.isInteger(o[k]) ? `${where}.${k} is not an integer` : e
  }
  const pick = (o: Json, where: string, fields: [string, boolean, boolean][]): string => {
    const parts: string[] = []
    for (const [k, required, integer] of fields) {
      const e = integer ? int(o, k, where, required) : num(o, k, where, required)
      if (typeof e === 'string') throw new Error(e)
      if (e === undefined) parts.push(`${JSON.stringify(k)}:${JSON.stringify(o[k])}`)
    }
    return `{${parts.join(',')}}`
  }
  try {
    const main = s.main
    const wind = s.wind
    const clouds = s.clouds
    if (!isObj(main)) return `${at}.main is missing`
    if (!isObj(wind)) return `${at}.wind is missing`
    if (!isObj(clouds)) return `${at}.clouds is missing`
    if (typeof s.dt !== 'number' || !Number.isInteger(s.dt)) return `${at}.dt is not an integer`
    const parts = [
      `"main":${pick(main, `${at}.main`, [['grnd_level', false, false], ['humidity', true, false], ['pressure', true, false], ['sea_level', false, false], ['temp', true, false], ['temp_min', true, false], ['temp_max', true, false]])}`,
      `"wind":${pick(wind, `${at}.wind`, [['speed', true, false], ['deg', true, false], ['gust', false, false], ['var_end', false, true], ['var_beg', false, true]])}`,
      `"clouds":${pick(clouds, `${at}.clouds`, [['all', true, true]])}`,
    ]
    for (const k of ['rain', 'snow'] as const) {
      const v = s[k]
      if (v === undefined || v === null) continue
      if (!isObj(v)) return `${at}.${k} is not an object`
      parts.push(`"${k}":${pick(v, `${at}.${k}`, [['1h', false, false], ['3h', false, false]])}`)
    }
    const conditions = s.weather ?? []
    if (!Array.isArray(conditions)) return `${at}.weather is not a list`
    const items: string[] = []
    for (const [i, c] of conditions.entries()) {
      const w = `${at}.weather[${i}]`
      if (!isObj(c)) return `${w} is not an object`
      for (const k of ['main', 'description', 'icon']) if (typeof c[k] !== 'string') return `${w}.${k} is not a string`
      const e = int(c, 'id', w, true)
      if (typeof e === 'string') return e
      items.push(`{"main":${JSON.stringify(c.main)},"description":${JSON.stringify(c.description)},"id":${c.id},"icon":${JSON.stringify(c.icon)}}`)
    }
    parts.push(`"weather":[${items.join(',')}]`, `"dt":"${new Date(s.dt * 1000).toISOString()}"`)
    return { dt: s.dt, data: `{${parts.join(',')}}` }
  } catch (err) {
    return (err as Error).message
  }
}

/** Reads an answer of `/data/2.5/history/city`: its hourly stamps, or the error Snowplow's client reports for it. */
export function parseHistory(status: number, body: string): Stamp[] | WeatherError {
  if (status === 401 || status === 403) return { error: 'Check your API key' }
  if (status < 200 || status > 299) return { error: `Request failed with status ${status}` }
  let doc: unknown
  try {
    doc = JSON.parse(body)
  } catch (err) {
    const shown = body.length > 1000 ? `${body.slice(0, 1000)}…` : body
    return { error: `OpenWeatherMap Error when trying to parse following json: \n${shown}\n\nMessage from the parser:\n ${(err as Error).message}` }
  }
  if (!isObj(doc)) return { error: 'Could not extract the weather history from the answer: not an object' }
  if (!Array.isArray(doc.list)) {
    return { error: typeof doc.message === 'string' ? doc.message : 'Could not extract the weather history from the answer: no list of stamps' }
  }
  const stamps: Stamp[] = []
  for (const [i, s] of doc.list.entries()) {
    const st = stampData(s, `list[${i}]`)
    if (typeof st === 'string') return { error: `Could not extract the weather history from the answer: ${st}` }
    stamps.push(st)
  }
  if (stamps.length === 0) return { error: 'Server response has no weather stamps' }
  return stamps
}

/** The stamp nearest `seconds` (the first of equally near ones). */
export function closest(stamps: readonly Stamp[], seconds: number): Stamp {
  let best = stamps[0]!
  for (const s of stamps) if (Math.abs(seconds - s.dt) < Math.abs(seconds - best.dt)) best = s
  return best
}

export interface WeatherHistoryOptions {
  readonly http: HttpGet
  /** Up to the host: `https://history.openweathermap.org`. */
  readonly baseUrl: string
  readonly apiKey: string
  readonly timeoutMs: number
  readonly cacheSize: number
  readonly geoPrecision: number
  readonly now: () => number
}

interface Held {
  readonly value: readonly Stamp[] | WeatherError
  readonly until: number
}

/** The hourly stamps of a day and cell, fetched once; concurrent events of a cell share the request. */
export class WeatherHistory {
  private readonly held = new Map<string, Held>()
  private readonly pending = new Map<string, Promise<readonly Stamp[] | WeatherError>>()
  requests = 0

  constructor(private readonly o: WeatherHistoryOptions) {}

  url(lat: string, lon: string, dayStartSec: number): string {
    const q = new URLSearchParams({ appid: this.o.apiKey, lat, lon, start: String(dayStartSec), end: String(dayStartSec + 86_400), cnt: '24' })
    return `${this.o.baseUrl}/data/2.5/history/city?${q}`
  }

  /** The day's stamps for the cell of (lat, lon): at once when held, else a promise. */
  stamps(lat: number, lon: number, latText: string, lonText: string, ms: number): readonly Stamp[] | WeatherError | Promise<readonly Stamp[] | WeatherError> {
    const dayStart = Math.floor(ms / DAY) * DAY
    const key = `${dayStart}|${roundCoordinate(lat, this.o.geoPrecision)}|${roundCoordinate(lon, this.o.geoPrecision)}`
    const h = this.held.get(key)
    if (h !== undefined) {
      this.held.delete(key)
      if (h.until > this.o.now()) {
        this.held.set(key, h)
        return h.value
      }
    }
    let p = this.pending.get(key)
    if (p === undefined) {
      p = this.fetch(key, latText, lonText, dayStart / 1000).finally(() => this.pending.delete(key))
      this.pending.set(key, p)
    }
    return p
  }

  private async fetch(key: string, lat: string, lon: string, dayStartSec: number): Promise<readonly Stamp[] | WeatherError> {
    this.requests++
    const r = await this.o.http.get(this.url(lat, lon, dayStartSec), { timeoutMs: this.o.timeoutMs }).catch((err: Error) => ({ ok: false as const, error: err.message }))
    const value: readonly Stamp[] | WeatherError = r.ok ? parseHistory(r.status, r.body) : { error: `OpenWeatherMap request failed: ${r.error}`, timeout: 'timedOut' in r && r.timedOut === true }
    if (isError(value) && value.timeout) return value
    this.held.set(key, { value, until: isError(value) ? this.o.now() + WEATHER_ERROR_HOLD_MS : Infinity })
    if (this.held.size > this.o.cacheSize) this.held.delete(this.held.keys().next().value as string)
    return value
  }
}

type Info = { readonly schemaKey: string; readonly identifier: string }

export class WeatherEnrichment {
  constructor(
    readonly history: WeatherHistory,
    private readonly info: Info,
  ) {}

  run(ev: EnrichedEvent): StepResult | Promise<StepResult> {
    const lat = ev.f[F.geo_latitude]
    const lon = ev.f[F.geo_longitude]
    const t = ev.f[F.derived_tstamp] as string | null
    if (lat === null || lon === null || t === null) {
      const failures: EnrichmentFailure[] = []
      for (const [v, field] of [[lat, 'geo_latitude'], [lon, 'geo_longitude'], [t, 'derived_tstamp']] as const) {
        if (v === null) failures.push({ enrichment: this.info, message: { field, value: null, expectation: 'missing' } })
      }
      return { failures }
    }
    const ms = parseTimestamp(t)
    const seconds = Math.floor(ms / 1000)
    if (!(seconds >= 1)) return this.fail('Timestamp should be greater than 0')
    const la = Number(lat)
    const lo = Number(lon)
    if (!Number.isFinite(la) || !Number.isFinite(lo)) return this.fail(`the coordinates are not numbers: ${String(lat)}, ${String(lon)}`)
    const s = this.history.stamps(la, lo, String(lat), String(lon), ms)
    if (s instanceof Promise) return s.then((v) => this.result(v, seconds))
    return this.result(s, seconds)
  }

  private fail(error: string): StepResult {
    return { failures: [{ enrichment: this.info, message: { error } }] }
  }

  private result(v: readonly Stamp[] | WeatherError, seconds: number): StepResult {
    if (isError(v)) return this.fail(v.error)
    return { contexts: [{ schema: WEATHER_SCHEMA, data: closest(v, seconds).data }] }
  }
}

/** Between IP lookups and the next step, in either order. */
const AFTER = 0.05

export const weather: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'weather_enrichment_config',
  models: [1],
  extensions: {
    apiUrl: (v) => checkBaseUrl('apiUrl', v),
    runAfterIpLookups: (v) => (typeof v === 'boolean' ? undefined : 'runAfterIpLookups must be true or false'),
  },
  create(config, ctx): Enrichment {
    const p = config.parameters
    const apiHost = String(p.apiHost)
    if (typeof p.apiUrl !== 'string' && !/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(apiHost)) {
      throw new ConfigError(`apiHost must be a host name such as history.openweathermap.org, got ${JSON.stringify(apiHost)} (a full URL goes in apiUrl)`)
    }
    if (!ctx.web) throw new ConfigError('the weather enrichment reads OpenWeatherMap, and this runtime gives enrichments no network access')
    const history = new WeatherHistory({
      http: ctx.web.http,
      now: ctx.web.now ?? Date.now,
      baseUrl: baseUrl(typeof p.apiUrl === 'string' ? p.apiUrl : `https://${apiHost}`),
      apiKey: String(p.apiKey),
      timeoutMs: Number(p.timeout) * 1000,
      cacheSize: Number(p.cacheSize),
      geoPrecision: Number(p.geoPrecision),
    })
    const step = new WeatherEnrichment(history, { schemaKey: toIgluUri(config.schema), identifier: 'weather' })
    // Snowplow's place (step 15) comes before IP lookups; runAfterIpLookups moves the step right after them, to read their coordinates.
    const order = p.runAfterIpLookups === true ? orderOf('ipLookups', ctx.legacyOrder) + AFTER : orderOf('weather', ctx.legacyOrder)
    return { id: 'weather', order, run: (ev) => step.run(ev) }
  },
}
