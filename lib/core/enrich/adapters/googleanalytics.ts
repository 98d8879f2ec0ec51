/**
 * Google Analytics measurement protocol (`/com.google.analytics/v1`): the
 * body holds one hit per line, form-encoded. The hit type (`t`) picks the
 * event's schema and the parameters it takes; the other known parameters
 * become contexts (general, user, session, traffic source, system info, …),
 * the indexed ones (`pr1id`, `il2pi3nm`, `cd4`, …) one context per index
 * (products, impressions, promotions, custom dimensions and metrics); a few
 * are also copied to tracker-protocol fields (`dl` → `url`, `uip` → `ip`, …).
 */
import { fail, failAll, inputData, lookupSchema, parseForm, CONTEXTS, UNSTRUCT_EVENT, type Failure, type Params, type Webhook, schemas, schemaUri } from './common'
import { jsonText, JNum, type J, type JObj } from './jtree'
import { stringify } from '../json'
import type { AdapterContext, RawEvent } from './types'

const TRACKER = 'com.google.analytics.measurement-protocol-v1'
const MP = 'iglu:com.google.analytics.measurement-protocol'
const schema = (name: string) => `${MP}/${name}/jsonschema/1-0-0`

type Translate = (v: string) => { ok: true; value: J } | { ok: false; error: string }
interface Field {
  readonly name: string
  readonly translate: Translate
}

const str: Translate = (v) => ({ ok: true, value: v })
const int: Translate = (v) => {
  const n = /^[-+]?\d{1,10}$/.test(v) ? Number(v) : Number.NaN
  return Number.isInteger(n) && n <= 2147483647 && n >= -2147483648 ? { ok: true, value: new JNum(String(n)) } : { ok: false, error: 'Cannot be converted to java.lang.Integer' }
}
const DECIMAL_RE = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/
const twoDecimals: Translate = (v) => {
  const r = roundHalfEven2(v)
  return r === undefined ? { ok: false, error: 'Cannot be converted to Double' } : { ok: true, value: new JNum(String(r)) }
}
const double: Translate = (v) => {
  const n = DECIMAL_RE.test(v) ? Number(v) : Number.NaN
  return Number.isFinite(n) ? { ok: true, value: new JNum(String(n)) } : { ok: false, error: 'Cannot be converted to Double' }
}
const bool: Translate = (v) => (v === '1' ? { ok: true, value: true } : v === '0' ? { ok: true, value: false } : { ok: false, error: 'Cannot be converted to boolean, only 1 or 0 are supported' })

/** A decimal string rounded to two places, half to even (BigDecimal.setScale(2, HALF_EVEN)), as a number. */
export function roundHalfEven2(v: string): number | undefined {
  const m = DECIMAL_RE.exec(v)
  if (!m) return undefined
  const neg = v.startsWith('-')
  const [intPart, frac = ''] = m[1]!.split('.')
  const exp = Number(m[2]?.slice(1) ?? '0')
  if (Math.abs(exp) > 400) return undefined
  // digits × 10^(scale) with scale = exp - frac.length
  let digits = BigInt((intPart || '0') + frac)
  const scale = exp - frac.length
  // digits × 10^scale as hundredths
  if (scale >= -2) {
    digits *= 10n ** BigInt(scale + 2)
  } else {
    const div = 10n ** BigInt(-2 - scale)
    const q = digits / div
    const r = digits % div
    const twice = r * 2n
    digits = twice > div || (twice === div && q % 2n === 1n) ? q + 1n : q
  }
  const n = Number(digits) / 100
  return Number.isFinite(n) ? (neg ? -n : n) : undefined
}

/** `obj[k]` when `k` is its own member (never an inherited one such as `constructor`). */
const own = <T>(obj: Readonly<Record<string, T>>, k: string): T | undefined => (Object.prototype.hasOwnProperty.call(obj, k) ? obj[k] : undefined)

const fields = (entries: Record<string, [string, Translate]>): Record<string, Field> =>
  Object.fromEntries(Object.entries(entries).map(([k, [name, translate]]) => [k, { name, translate }]))

interface HitData {
  readonly schema: string
  readonly fields: Record<string, Field>
}

/** Hit types: the event schema and the parameters it takes. */
const HITS: Record<string, HitData> = {
  pageview: { schema: schema('page_view'), fields: fields({ dl: ['documentLocationUrl', str], dh: ['documentHostName', str], dp: ['documentPath', str], dt: ['documentTitle', str] }) },
  screenview: { schema: schema('screen_view'), fields: fields({ cd: ['screenName', str] }) },
  event: { schema: schema('event'), fields: fields({ ec: ['category', str], ea: ['action', str], el: ['label', str], ev: ['value', int] }) },
  transaction: {
    schema: schema('transaction'),
    fields: fields({ ti: ['id', str], ta: ['affiliation', str], tr: ['revenue', twoDecimals], ts: ['shipping', twoDecimals], tt: ['tax', twoDecimals], tcc: ['couponCode', str], cu: ['currencyCode', str] }),
  },
  item: {
    schema: schema('item'),
    fields: fields({ ti: ['transactionId', str], in: ['name', str], ip: ['price', twoDecimals], iq: ['quantity', int], ic: ['code', str], iv: ['category', str], cu: ['currencyCode', str] }),
  },
  social: { schema: schema('social'), fields: fields({ sn: ['network', str], sa: ['action', str], st: ['actionTarget', str] }) },
  exception: { schema: schema('exception'), fields: fields({ exd: ['description', str], exf: ['isFatal', bool] }) },
  timing: {
    schema: schema('timing'),
    fields: fields({
      utc: ['userTimingCategory', str], utv: ['userTimingVariableName', str], utt: ['userTimingTime', int], utl: ['userTimingLabel', str], plt: ['pageLoadTime', int],
      dns: ['dnsTime', int], pdt: ['pageDownloadTime', int], rrt: ['redirectResponseTime', int], tcp: ['tcpConnectTime', int], srt: ['serverResponseTime', int],
      dit: ['domInteractiveTime', int], clt: ['contentLoadTime', int],
    }),
  },
}

export const GA_SCHEMAS: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(HITS).map(([t, d]) => [t, d.schema]))

/** Contexts built from plain parameters. */
const CONTEXTS_DATA: HitData[] = [
  HITS.pageview!,
  { schema: 'iglu:com.google.analytics/undocumented/jsonschema/1-0-0', fields: fields({ a: ['a', str], jid: ['jid', str], gjid: ['gjid', str] }) },
  { schema: 'iglu:com.google.analytics/private/jsonschema/1-0-0', fields: fields({ _v: ['v', str], _u: ['u', str], _gid: ['gid', str], _s: ['s', int], _r: ['r', int] }) },
  { schema: schema('general'), fields: fields({ v: ['protocolVersion', str], tid: ['trackingId', str], aip: ['anonymizeIp', bool], ds: ['dataSource', str], qt: ['queueTime', int], z: ['cacheBuster', str] }) },
  { schema: schema('user'), fields: fields({ cid: ['clientId', str], uid: ['userId', str] }) },
  { schema: schema('session'), fields: fields({ sc: ['sessionControl', str], uip: ['ipOverride', str], ua: ['userAgentOverride', str], geoid: ['geographicalOverride', str] }) },
  {
    schema: schema('traffic_source'),
    fields: fields({
      dr: ['documentReferrer', str], cn: ['campaignName', str], cs: ['campaignSource', str], cm: ['campaignMedium', str], ck: ['campaignKeyword', str],
      cc: ['campaignContent', str], ci: ['campaignId', str], gclid: ['googleAdwordsId', str], dclid: ['googleDisplayAdsId', str],
    }),
  },
  {
    schema: schema('system_info'),
    fields: fields({ sr: ['screenResolution', str], vp: ['viewportSize', str], de: ['documentEncoding', str], sd: ['screenColors', str], ul: ['userLanguage', str], je: ['javaEnabled', bool], fl: ['flashVersion', str] }),
  },
  { schema: schema('link'), fields: fields({ linkid: ['id', str] }) },
  { schema: schema('app'), fields: fields({ an: ['name', str], aid: ['id', str], av: ['version', str], aiid: ['installerId', str] }) },
  { schema: schema('product_action'), fields: fields({ pa: ['productAction', str], pal: ['productActionList', str], cos: ['checkoutStep', int], col: ['checkoutStepOption', str] }) },
  { schema: schema('content_experiment'), fields: fields({ xid: ['id', str], xvar: ['variant', str] }) },
  { schema: schema('hit'), fields: fields({ t: ['type', str], ni: ['nonInteractionHit', bool] }) },
  { schema: schema('promotion_action'), fields: fields({ promoa: ['promotionAction', str] }) },
]

const FIELD_CONTEXT = new Map<string, HitData>()
for (const d of CONTEXTS_DATA) for (const k of Object.keys(d.fields)) FIELD_CONTEXT.set(k, d)

/** The marker of index fields in the composite tables (`IFpr`: the index in `pr<i>…`). */
const IF = 'IF'

/** Contexts built from indexed parameters. */
const COMPOSITE: HitData[] = [
  {
    schema: schema('product'),
    fields: fields({
      IFpr: ['index', int], prid: ['sku', str], prnm: ['name', str], prbr: ['brand', str], prca: ['category', str], prva: ['variant', str],
      prpr: ['price', twoDecimals], prqt: ['quantity', int], prcc: ['couponCode', str], prps: ['position', int], cu: ['currencyCode', str],
    }),
  },
  { schema: schema('product_custom_dimension'), fields: fields({ IFprcd: ['productIndex', int], IFcd: ['dimensionIndex', int], prcd: ['value', str] }) },
  { schema: schema('product_custom_metric'), fields: fields({ IFprcm: ['productIndex', int], IFcm: ['metricIndex', int], prcm: ['value', int] }) },
  { schema: schema('product_impression_list'), fields: fields({ IFil: ['index', int], ilnm: ['name', str] }) },
  {
    schema: schema('product_impression'),
    fields: fields({
      IFilpi: ['listIndex', int], IFpi: ['productIndex', int], ilpiid: ['sku', str], ilpinm: ['name', str], ilpibr: ['brand', str], ilpica: ['category', str],
      ilpiva: ['variant', str], ilpips: ['position', int], ilpipr: ['price', twoDecimals], cu: ['currencyCode', str],
    }),
  },
  { schema: schema('product_impression_custom_dimension'), fields: fields({ IFilpicd: ['listIndex', int], IFpicd: ['productIndex', int], IFcd: ['customDimensionIndex', int], ilpicd: ['value', str] }) },
  { schema: schema('product_impression_custom_metric'), fields: fields({ IFilpicm: ['listIndex', int], IFpicm: ['productIndex', int], IFcm: ['customMetricIndex', int], ilpicm: ['value', int] }) },
  { schema: schema('promotion'), fields: fields({ IFpromo: ['index', int], promoid: ['id', str], promonm: ['name', str], promocr: ['creative', str], promops: ['position', str] }) },
  { schema: schema('custom_dimension'), fields: fields({ IFcd: ['index', int], cd: ['value', str] }) },
  { schema: schema('custom_metric'), fields: fields({ IFcm: ['index', int], cm: ['value', double] }) },
  { schema: schema('content_group'), fields: fields({ IFcg: ['index', int], cg: ['value', str] }) },
]

const WITH_CU = new Set(COMPOSITE.filter((d) => 'cu' in d.fields).map((d) => d.schema))
const INDEX_FIELDS = new Map(COMPOSITE.map((d) => [d.schema, Object.keys(d.fields).filter((k) => k.startsWith(IF)).length]))

/** Measurement protocol parameters copied to tracker-protocol fields. */
function directMappings(hitType: string): Record<string, string> {
  return {
    uip: 'ip', dr: 'refr', de: 'cs', sd: 'cd', ul: 'lang', je: 'f_java', dl: 'url', dt: 'page',
    ti: hitType === 'transaction' ? 'tr_id' : 'ti_id', ta: 'tr_af', tr: 'tr_tt', ts: 'tr_sh', tt: 'tr_tx', in: 'ti_nm', ip: 'ti_pr', iq: 'ti_qu', ic: 'ti_sk', iv: 'ti_ca',
    cu: hitType === 'transaction' ? 'tr_cu' : 'ti_cu', ua: 'ua',
  }
}

export const googleAnalytics: Webhook = (p, ctx) => {
  if (p.body === null || p.body === '') return fail(inputData('body', null, 'empty body'))
  const lines = p.body.split(/\r\n|\r|\n/)
  if (lines[lines.length - 1] === '') lines.pop()
  const out: RawEvent[] = []
  const failures: Failure[] = []
  for (const line of lines) {
    const r = hit(line, ctx)
    if (r.ok) out.push({ payload: p, parameters: r.params })
    else failures.push(...r.failures)
  }
  if (failures.length > 0) return failAll(failures)
  return { ok: true, events: out }
}

type HitResult = { ok: true; params: Params } | { ok: false; failures: Failure[] }

function hit(line: string, ctx: AdapterContext): HitResult {
  const form = parseForm(line)
  if (!form.ok) return { ok: false, failures: [inputData('body', line, form.error)] }
  const params = new Map<string, string | null>()
  for (const [k, v] of form.pairs) {
    if (params.has(k)) params.delete(k)
    params.set(k, v)
  }
  const hitType = params.get('t')
  if (hitType === undefined || hitType === null) return { ok: false, failures: [inputData('body', line, 'no t parameter provided: cannot determine hit type')] }
  const values = new Map<string, string>()
  for (const [k, v] of params) if (v !== null) values.set(k, v)

  const failures: Failure[] = []
  const hitData = own(HITS, hitType)
  if (hitData === undefined) failures.push(inputData('t', hitType, 'no matching hit type'))
  const schemaOf = lookupSchema(hitType, schemas(ctx, GA_SCHEMAS))
  if (!schemaOf.ok) failures.push(schemaOf.failure)
  // plain contexts
  const simple = new Map<string, JObj>()
  for (const [k, v] of values) {
    const d = FIELD_CONTEXT.get(k)
    if (d === undefined) continue
    const f = d.fields[k]!
    const t = f.translate(v)
    if (!t.ok) {
      failures.push(inputData(f.name, v, t.error))
      continue
    }
    let ctx = simple.get(d.schema)
    if (ctx === undefined) simple.set(d.schema, (ctx = new Map()))
    ctx.set(f.name, t.value)
  }
  const composite = compositeContexts(values)
  if (!composite.ok) failures.push(composite.failure)
  if (failures.length > 0 || hitData === undefined || !composite.ok || !schemaOf.ok) return { ok: false, failures }

  const contexts: string[] = []
  for (const [s, data] of simple) if (hitType !== 'pageview' || s !== HITS.pageview!.schema) contexts.push(`{"schema":${stringify(schemaUri(ctx, s))},"data":${jsonText(data)}}`)
  for (const [s, data] of composite.contexts) contexts.push(`{"schema":${stringify(schemaUri(ctx, s))},"data":${jsonText(data)}}`)

  const event: JObj = new Map()
  for (const [k, v] of values) {
    const f = own(hitData.fields, k)
    if (f === undefined) continue
    const t = f.translate(v)
    if (!t.ok) return { ok: false, failures: [inputData(f.name, v, t.error)] }
    event.set(f.name, t.value)
  }
  const out: Params = new Map()
  if (contexts.length > 0) out.set('co', `{"schema":"${CONTEXTS}","data":[${contexts.join(',')}]}`)
  const direct = directMappings(hitType)
  for (const [k, v] of params) {
    const to = own(direct, k)
    if (to !== undefined) out.set(to, v)
  }
  out.set('e', 'ue')
  out.set('ue_pr', `{"schema":"${UNSTRUCT_EVENT}","data":{"schema":${stringify(schemaOf.schema)},"data":${jsonText(event)}}}`)
  out.set('tv', TRACKER)
  out.set('p', 'srv')
  return { ok: true, params: out }
}

const COMPOSITE_RE = /^(pr|promo|il|cd|cm|cg)(\d+)([a-zA-Z]*)(\d*)([a-zA-Z]*)(\d*)$/
const COMPOSITE_RE_TEXT = '(pr|promo|il|cd|cm|cg)(\\d+)([a-zA-Z]*)(\\d*)([a-zA-Z]*)(\\d*)$'

/** An indexed parameter's parts: its name parts and its indexes (`pr12cd3` → [pr, cd], [12, 3]). */
export function breakDownName(name: string): { ok: true; strs: string[]; ints: string[] } | { ok: false; failure: Failure } {
  const m = COMPOSITE_RE.exec(name)
  if (!m) {
    if (name === '') return { ok: false, failure: inputData('', null, 'cannot parse empty field name') }
    return { ok: false, failure: inputData(name, null, `composite field name has to conform to regex ${COMPOSITE_RE_TEXT}`) }
  }
  const groups = m.slice(1).filter((g) => g !== '')
  const strs = groups.filter((_, i) => i % 2 === 0)
  const ints = groups.filter((_, i) => i % 2 === 1)
  return { ok: true, strs, ints }
}

/** An indexed parameter as index fields (`IFpr` → 12) and its value field (`prid` → value). */
export function breakDownField(name: string, value: string): { ok: true; fields: Map<string, string> } | { ok: false; failure: Failure } {
  const b = breakDownName(name)
  if (!b.ok) return b
  const { strs, ints } = b
  let names: string[]
  if (strs.length === ints.length) names = strs
  else if (strs.length === ints.length + 1) names = strs.slice(0, -1)
  else return { ok: false, failure: inputData(name, value, 'cannot parse composite field name: unexpected number of values') }
  // suffixes: [a, b, c] → [abc, bc, c]
  const out = new Map<string, string>()
  names.forEach((_, i) => out.set(IF + names.slice(i).join(''), ints[i]!))
  out.set(strs.join(''), value)
  return { ok: true, fields: out }
}

type Composite = { ok: true; contexts: [string, JObj][] } | { ok: false; failure: Failure }

function compositeContexts(values: Map<string, string>): Composite {
  const entries = [...values].filter(([k]) => /\d/.test(k)).sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
  const indexMaps: Map<string, string>[] = []
  const valueMaps: Map<string, string>[] = []
  for (const [k, v] of entries) {
    const b = breakDownField(k, v)
    if (!b.ok) return b
    const idx = new Map<string, string>()
    const val = new Map<string, string>()
    for (const [n, x] of b.fields) (n.startsWith(IF) ? idx : val).set(n, x)
    indexMaps.push(idx)
    valueMaps.push(val)
  }
  const dedup = indexMaps.filter((m, i) => i === 0 || !sameMap(m, indexMaps[i - 1]!))
  const grouped = new Map<string, string[]>()
  for (const m of [...valueMaps, ...dedup]) {
    for (const [k, v] of m) {
      const list = grouped.get(k)
      if (list === undefined) grouped.set(k, [v])
      else list.push(v)
    }
  }
  // schema → field name → translated values
  const translated = new Map<string, Map<string, J[]>>()
  for (const [field, vals] of grouped) {
    for (const d of COMPOSITE) {
      const f = own(d.fields, field)
      if (f === undefined) continue
      const out: J[] = []
      for (const v of vals) {
        const t = f.translate(v)
        if (!t.ok) return { ok: false, failure: inputData(f.name, v, t.error) }
        out.push(t.value)
      }
      let m = translated.get(d.schema)
      if (m === undefined) translated.set(d.schema, (m = new Map()))
      m.set(f.name, out)
    }
  }
  const cu = values.get('cu')
  const contexts: [string, JObj][] = []
  for (const d of COMPOSITE) {
    const m = translated.get(d.schema)
    if (m === undefined) continue
    const names = [...m.keys()]
    const lists = [...m.values()]
    const longest = Math.max(...lists.map((l) => l.length))
    for (let i = 0; i < longest; i++) {
      // the i-th values of the lists that have one (Snowplow's transpose)
      const present = lists.map((l) => l[i]).filter((x): x is J => x !== undefined)
      const record: JObj = new Map()
      if (cu !== undefined && WITH_CU.has(d.schema)) record.set('currencyCode', cu)
      present.forEach((x, j) => record.set(names[j]!, x))
      const min = INDEX_FIELDS.get(d.schema)! + (record.has('currencyCode') ? 1 : 0)
      if (record.size > min) contexts.push([d.schema, record])
    }
  }
  return { ok: true, contexts }
}

function sameMap(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false
  for (const [k, v] of a) if (b.get(k) !== v) return false
  return true
}

/** Every context schema the adapter may use. */
export const GA_CONTEXT_SCHEMAS: readonly string[] = [...CONTEXTS_DATA, ...COMPOSITE].map((d) => d.schema)
