/**
 * `currency_conversion_config`: `tr_total`, `tr_tax`, `tr_shipping` (in
 * `tr_currency`) and `ti_price` (in `ti_currency`) converted into the
 * configured base currency (`tr_total_base`, `tr_tax_base`,
 * `tr_shipping_base`, `ti_price_base`) with Open Exchange Rates' end-of-day
 * rates of the collector timestamp's day (UTC), as Snowplow does
 * (`rateAt: EOD_PRIOR`). `base_currency` is set on every event.
 *
 * Arithmetic is Snowplow's (scala-forex and Joda-Money) done exactly: the
 * amount as its binary double, the rate as 1 / rate(from) rounded half-even
 * to 6 decimals times rate(base), the result rounded half-even to the base
 * currency's minor units. A day's rates are fetched once
 * (`/historical/YYYY-MM-DD.json`) and kept; the current day's for an hour.
 */
import { toIgluUri } from '../../iglu/keys'
import { parseTimestamp } from '../convert'
import { F } from '../fields'
import type { EnrichedEvent } from '../event'
import type { Enrichment, EnrichmentFailure, StepResult } from '../steps'
import { currencyPlaces } from './currencies'
import { baseUrl, checkBaseUrl, type HttpGet } from './http-get'
import { ConfigError, orderOf, type EnrichmentModule } from './module'

export const OER_DEFAULT_URL = 'https://openexchangerates.org/api'
/** Per request: Snowplow's client reads for at most 5 seconds. */
export const OER_TIMEOUT_MS = 5000
/** Days of rates kept (each about 170 rates). */
const MAX_DAYS = 400
const HOUR = 3_600_000
const DAY = 86_400_000
/** The first day Open Exchange Rates has rates for. */
const FIRST_DAY = Date.UTC(1999, 0, 1)

export type AccountType = 'DEVELOPER' | 'ENTERPRISE' | 'UNLIMITED'

/** A decimal `n / 10^s`. */
interface Decimal {
  readonly n: bigint
  readonly s: number
}

const POW10: bigint[] = [1n]
const pow10 = (k: number): bigint => {
  while (POW10.length <= k) POW10.push(POW10[POW10.length - 1]! * 10n)
  return POW10[k]!
}

/** The decimal a JavaScript number prints as (`1.5`, `2e-7`, `1e+21`). */
export function decimalOf(x: number): Decimal {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x))
  if (!m) throw new Error(`not a finite number: ${x}`)
  const frac = m[3] ?? ''
  let n = BigInt(m[2]! + frac)
  let s = frac.length - Number(m[4] ?? 0)
  if (s < 0) {
    n *= pow10(-s)
    s = 0
  }
  return { n: m[1] ? -n : n, s }
}

/** `num / den` rounded half-even (`den` > 0). */
function divHalfEven(num: bigint, den: bigint): bigint {
  const neg = num < 0n
  const a = neg ? -num : num
  let q = a / den
  const twice = 2n * (a - q * den)
  if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n
  return neg ? -q : q
}

/** The exact value of a double as `num / den`, `den` a power of two. */
function exactDouble(x: number): { num: bigint; den: bigint } {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, x)
  const bits = view.getBigUint64(0)
  const negative = bits >> 63n === 1n
  const exp = Number((bits >> 52n) & 0x7ffn)
  let mant = bits & ((1n << 52n) - 1n)
  let e: number
  if (exp === 0) e = -1074
  else {
    mant |= 1n << 52n
    e = exp - 1075
  }
  const signed = negative ? -mant : mant
  return e >= 0 ? { num: signed << BigInt(e), den: 1n } : { num: signed, den: 1n << BigInt(-e) }
}

/** Fixed-point text of `q / 10^places` (Java's `BigDecimal.toString` for such a scale). */
function fixed(q: bigint, places: number): string {
  const neg = q < 0n
  const digits = (neg ? -q : q).toString().padStart(places + 1, '0')
  const text = places === 0 ? digits : `${digits.slice(0, digits.length - places)}.${digits.slice(digits.length - places)}`
  return neg ? `-${text}` : text
}

/** `amount × rate` (rate undefined: the same currency) rounded half-even to `places` decimals. */
export function convertAmount(amount: number, rate: Decimal | undefined, places: number): string {
  const { num, den } = exactDouble(amount)
  if (rate === undefined) return fixed(divHalfEven(num * pow10(places), den), places)
  return fixed(divHalfEven(num * rate.n * pow10(places), den * pow10(rate.s)), places)
}

/** A day's rates as the service answered them (against its base: USD for developer accounts, else the configured base). */
export interface RateTable {
  readonly rates: ReadonlyMap<string, Decimal>
  /** Cross rates into the base currency already computed from them, by source currency. */
  readonly cross?: Map<string, Decimal | OerError | string>
}

/** A problem of the service, in Snowplow's words: `Open Exchange Rates error, type: [type], message: [message]`. */
export interface OerError {
  readonly type: 'OtherErrors' | 'IllegalCurrency' | 'ResourcesNotAvailable'
  readonly message: string
}

const isOerError = (x: RateTable | OerError): x is OerError => (x as OerError).type !== undefined

/** The rate from `from` to `to` as Snowplow computes it: (1 / rate(from), 6 decimals half-even) × rate(to). */
export function crossRate(table: RateTable, from: string, to: string): Decimal | OerError | string {
  const f = table.rates.get(from)
  if (f === undefined) return { type: 'IllegalCurrency', message: `Currency not found in the API, invalid currency ${from}` }
  const t = table.rates.get(to)
  if (t === undefined) return { type: 'IllegalCurrency', message: `Currency not found in the API, invalid currency ${to}` }
  if (f.n === 0n) return 'Division by zero'
  const inverse = divHalfEven(pow10(6 + f.s), f.n)
  const rate = { n: inverse * t.n, s: 6 + t.s }
  return rate.n < 0n ? 'Cannot convert using a negative conversion multiplier' : rate
}

/** Reads an answer of `/historical/*.json` (or `/latest.json`). */
export function parseRates(status: number, body: string): RateTable | OerError {
  let doc: unknown
  try {
    doc = JSON.parse(body)
  } catch (err) {
    return { type: 'OtherErrors', message: `OER response is not JSON: ${(err as Error).message} (HTTP ${status})` }
  }
  const o = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>) : undefined
  // An error answer: {"error": true, "status": 401, "message": "invalid_app_id", "description": "…"}
  if (o && typeof o.message === 'string' && (o.error === true || status >= 400)) return { type: 'OtherErrors', message: o.message }
  const rates = o?.rates
  if (status !== 200 || typeof rates !== 'object' || rates === null || Array.isArray(rates)) {
    return { type: 'OtherErrors', message: `OER response couldn't be decoded (HTTP ${status})` }
  }
  const out = new Map<string, Decimal>()
  for (const [code, v] of Object.entries(rates as Record<string, unknown>)) {
    if (typeof v !== 'number' || !Number.isFinite(v)) return { type: 'OtherErrors', message: `OER response couldn't be decoded (rate of ${code.slice(0, 16)} is not a number)` }
    if (currencyPlaces(code) !== undefined) out.set(code, decimalOf(v))
  }
  return { rates: out, cross: new Map() }
}

export interface ExchangeRatesOptions {
  readonly http: HttpGet
  readonly apiUrl: string
  readonly apiKey: string
  readonly accountType: AccountType
  readonly baseCurrency: string
  readonly now: () => number
  readonly timeoutMs?: number
}

interface Held {
  readonly table: RateTable
  /** Until when it may be used (Infinity for a day that had ended when it was fetched). */
  readonly until: number
}

/** The end-of-day rates of each day, fetched once per day; concurrent requests for a day share one fetch. */
export class ExchangeRates {
  private readonly held = new Map<string, Held>()
  private readonly pending = new Map<string, Promise<RateTable | OerError>>()
  /** Requests sent (for tests and metrics). */
  requests = 0

  constructor(private readonly o: ExchangeRatesOptions) {}

  /** The URL of a day's rates. */
  url(day: string): string {
    const base = this.o.accountType === 'DEVELOPER' ? '' : `&base=${this.o.baseCurrency}`
    return `${this.o.apiUrl}/historical/${day}.json?app_id=${encodeURIComponent(this.o.apiKey)}${base}`
  }

  /** The rates of the UTC day starting at `dayStart` (epoch ms): at once when held, else a promise. */
  day(dayStart: number): RateTable | OerError | Promise<RateTable | OerError> {
    const now = this.o.now()
    if (!(dayStart >= FIRST_DAY && dayStart <= now)) {
      const shown = Number.isFinite(dayStart) && Math.abs(dayStart) <= 8.64e15 ? `${new Date(dayStart).toISOString().slice(0, 16)}Z[UTC]` : String(dayStart)
      return { type: 'ResourcesNotAvailable', message: `Exchange rate unavailable on the date [${shown}]` }
    }
    const day = new Date(dayStart).toISOString().slice(0, 10)
    const h = this.held.get(day)
    if (h !== undefined) {
      if (h.until > now) return h.table
      this.held.delete(day)
    }
    let p = this.pending.get(day)
    if (p === undefined) {
      p = this.fetch(day, dayStart).finally(() => this.pending.delete(day))
      this.pending.set(day, p)
    }
    return p
  }

  private async fetch(day: string, dayStart: number): Promise<RateTable | OerError> {
    this.requests++
    const r = await this.o.http.get(this.url(day), { timeoutMs: this.o.timeoutMs ?? OER_TIMEOUT_MS }).catch((err: Error) => ({ ok: false as const, error: err.message }))
    if (!r.ok) return { type: 'OtherErrors', message: `OER request failed: ${r.error}` }
    const t = parseRates(r.status, r.body)
    if (isOerError(t)) return t
    const fetchedAt = this.o.now()
    this.held.set(day, { table: t, until: fetchedAt >= dayStart + DAY ? Infinity : fetchedAt + HOUR })
    if (this.held.size > MAX_DAYS) this.held.delete(this.held.keys().next().value as string)
    return t
  }
}

type Info = { readonly schemaKey: string; readonly identifier: string }

const AMOUNTS = [
  [F.tr_total, F.tr_total_base, F.tr_currency, 'tr_currency'],
  [F.tr_tax, F.tr_tax_base, F.tr_currency, 'tr_currency'],
  [F.tr_shipping, F.tr_shipping_base, F.tr_currency, 'tr_currency'],
  [F.ti_price, F.ti_price_base, F.ti_currency, 'ti_currency'],
] as const

const oerFailure = (info: Info, e: OerError): EnrichmentFailure => ({ enrichment: info, message: { error: `Open Exchange Rates error, type: [${e.type}], message: [${e.message}]` } })
const exceptionFailure = (info: Info, message: string): EnrichmentFailure => ({ enrichment: info, message: { error: `an error happened while converting the currency: ${message}` } })

/** The step: converts what the event has, at its collector timestamp's day. */
export class CurrencyConversion {
  private readonly places: number
  constructor(
    readonly rates: ExchangeRates,
    readonly baseCurrency: string,
    private readonly info: Info,
  ) {
    this.places = currencyPlaces(baseCurrency)!
  }

  run(ev: EnrichedEvent): StepResult | Promise<StepResult> {
    ev.f[F.base_currency] = this.baseCurrency
    // What is to be converted, in Snowplow's order (total, tax, shipping, item price).
    let items: Item[] | undefined
    let needRates = false
    for (const [amountCol, outCol, currencyCol, currencyName] of AMOUNTS) {
      const currency = ev.f[currencyCol] as string | null
      const amount = ev.f[amountCol] as string | null
      if (currency === null || amount === null) continue
      items ??= []
      if (currencyPlaces(currency) === undefined) {
        items.push({ outCol, amount: 0, currency, failure: { enrichment: this.info, message: { field: currencyName, value: currency, expectation: `Unknown currency '${currency}'` } } })
        continue
      }
      const n = Number(amount)
      if (!Number.isFinite(n)) items.push({ outCol, amount: n, currency, failure: exceptionFailure(this.info, 'Infinite or NaN') })
      else {
        items.push({ outCol, amount: n, currency })
        if (currency !== this.baseCurrency) needRates = true
      }
    }
    if (items === undefined) return {}
    if (!needRates) return this.apply(ev, undefined, items)
    const text = ev.f[F.collector_tstamp] as string | null
    if (text === null) return { failures: [{ enrichment: this.info, message: { field: 'collector_tstamp', value: null, expectation: 'missing' } }] }
    const ms = text === ev.collectorText ? ev.collectorMs : parseTimestamp(text)
    const table = this.rates.day(Math.floor(ms / DAY) * DAY)
    if (table instanceof Promise) return table.then((t) => this.apply(ev, t, items))
    return this.apply(ev, table, items)
  }

  private apply(ev: EnrichedEvent, table: RateTable | OerError | undefined, items: readonly Item[]): StepResult {
    const values: [number, string][] = []
    const failures: EnrichmentFailure[] = []
    for (const { outCol, amount, currency, failure } of items) {
      if (failure !== undefined) failures.push(failure)
      else if (currency === this.baseCurrency) values.push([outCol, convertAmount(amount, undefined, this.places)])
      else if (table === undefined || isOerError(table)) failures.push(oerFailure(this.info, table!))
      else {
        let rate = table.cross?.get(currency)
        if (rate === undefined) {
          rate = crossRate(table, currency, this.baseCurrency)
          table.cross?.set(currency, rate)
        }
        if (typeof rate === 'string') failures.push(exceptionFailure(this.info, rate))
        else if ('type' in rate) failures.push(oerFailure(this.info, rate))
        else values.push([outCol, convertAmount(amount, rate, this.places)])
      }
    }
    // As in Snowplow, the converted amounts are kept only when every conversion succeeded.
    if (failures.length > 0) return { failures }
    for (const [col, v] of values) ev.f[col] = v
    return {}
  }
}

interface Item {
  readonly outCol: number
  readonly amount: number
  readonly currency: string
  readonly failure?: EnrichmentFailure
}

const ACCOUNT_TYPES: readonly string[] = ['DEVELOPER', 'ENTERPRISE', 'UNLIMITED']

export const currencyConversion: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'currency_conversion_config',
  models: [1],
  extensions: { apiUrl: (v) => checkBaseUrl('apiUrl', v) },
  create(config, ctx): Enrichment {
    const p = config.parameters
    const baseCurrency = String(p.baseCurrency)
    if (currencyPlaces(baseCurrency) === undefined) throw new ConfigError(`baseCurrency: Unknown currency '${baseCurrency}' (an ISO 4217 code in capitals, e.g. USD)`)
    const accountType = String(p.accountType)
    if (!ACCOUNT_TYPES.includes(accountType)) throw new ConfigError(`accountType [${accountType}] is not one of DEVELOPER, ENTERPRISE, and UNLIMITED`)
    if (p.rateAt !== undefined && p.rateAt !== 'EOD_PRIOR') throw new ConfigError(`rateAt [${String(p.rateAt)}] is not supported (only EOD_PRIOR)`)
    if (!ctx.web) throw new ConfigError('the currency conversion enrichment reads Open Exchange Rates, and this runtime gives enrichments no network access')
    const rates = new ExchangeRates({
      http: ctx.web.http,
      now: ctx.web.now ?? Date.now,
      apiUrl: baseUrl(typeof p.apiUrl === 'string' ? p.apiUrl : OER_DEFAULT_URL),
      apiKey: String(p.apiKey),
      accountType: accountType as AccountType,
      baseCurrency,
    })
    const step = new CurrencyConversion(rates, baseCurrency, { schemaKey: toIgluUri(config.schema), identifier: 'currency-conversion' })
    return { id: 'currency-conversion', order: orderOf('currencyConversion', ctx.legacyOrder), run: (ev) => step.run(ev) }
  },
}
