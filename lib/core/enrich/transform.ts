/**
 * Phase 1 of enrichment: tracker parameters → atomic fields (every conversion
 * error collected), and the raw `ue_*` / `co` / `cx` texts for validation.
 */
import type { RawEvent } from './adapters'
import { base64Text, formatTimestamp, longTimestampText, plainMillis, YEAR_100, toBool, toDecimal, toDims, toEventType, toInt, toIp, toPlatform, toTimestamp, toUuid, tsv, type Conv } from './convert'
import type { EnrichedEvent } from './event'
import { F } from './fields'

/** An atomic field that could not be set: tracker parameter name, its value, why. */
export interface AtomicError {
  readonly field: string
  readonly value: string | null
  readonly message: string
  readonly keyword: 'atomic_field_parse_error' | 'atomic_field_length_exceeded'
}

export interface Transformed {
  readonly errors: AtomicError[]
  /** The unstruct-event JSON text (from `ue_pr`, or decoded `ue_px`), when sent. */
  readonly unstruct: string | null
  readonly contexts: string | null
}

export interface SetupContext {
  readonly etlTimestamp: string
  readonly vEtl: string
  readonly eventId: string
}

const STR: Record<string, number> = {
  aid: F.app_id, uid: F.user_id, duid: F.domain_userid, nuid: F.network_userid, ua: F.useragent, fp: F.user_fingerprint,
  tna: F.name_tracker, tv: F.v_tracker, cv: F.v_collector, lang: F.br_lang, cd: F.br_colordepth, tz: F.os_timezone,
  refr: F.page_referrer, url: F.page_url, page: F.page_title, cs: F.doc_charset,
  se_ca: F.se_category, ev_ca: F.se_category, se_ac: F.se_action, ev_ac: F.se_action, se_la: F.se_label, ev_la: F.se_label,
  se_pr: F.se_property, ev_pr: F.se_property, tr_id: F.tr_orderid, tr_af: F.tr_affiliation, tr_ci: F.tr_city, tr_st: F.tr_state,
  tr_co: F.tr_country, tr_cu: F.tr_currency, ti_id: F.ti_orderid, ti_sk: F.ti_sku, ti_nm: F.ti_name, ti_na: F.ti_name,
  ti_ca: F.ti_category, ti_cu: F.ti_currency,
}
const INT: Record<string, number> = {
  tid: F.txn_id, vid: F.domain_sessionidx, ti_qu: F.ti_quantity, pp_mix: F.pp_xoffset_min, pp_max: F.pp_xoffset_max, pp_miy: F.pp_yoffset_min, pp_may: F.pp_yoffset_max,
}
const DEC: Record<string, number> = { se_va: F.se_value, ev_va: F.se_value, tr_tt: F.tr_total, tr_tx: F.tr_tax, tr_sh: F.tr_shipping, ti_pr: F.ti_price }
const BOOL: Record<string, number> = {
  f_pdf: F.br_features_pdf, f_fla: F.br_features_flash, f_java: F.br_features_java, f_dir: F.br_features_director, f_qt: F.br_features_quicktime,
  f_realp: F.br_features_realplayer, f_wma: F.br_features_windowsmedia, f_gears: F.br_features_gears, f_ag: F.br_features_silverlight, cookie: F.br_cookies,
}
const TS: Record<string, number> = { dtm: F.dvce_created_tstamp, stm: F.dvce_sent_tstamp, ttm: F.true_tstamp }
const DIMS: Record<string, [number, number]> = {
  res: [F.dvce_screenwidth, F.dvce_screenheight], vp: [F.br_viewwidth, F.br_viewheight], ds: [F.doc_width, F.doc_height],
}

/** How each tracker parameter is mapped: a kind code and the column(s) it sets. */
const K_STR = 1
const K_INT = 2
const K_DEC = 3
const K_BOOL = 4
const K_TS = 5
const K_DIMS = 6
const K_E = 7
const K_P = 8
const K_IP = 9
const K_EID = 10
const K_SID = 11
const K_TNUID = 12
const K_UE_PR = 13
const K_UE_PX = 14
const K_CO = 15
const K_CX = 16

interface Mapping {
  readonly kind: number
  readonly col: number
  readonly col2: number
}

const MAPPINGS = new Map<string, Mapping>()
function addMappings(kind: number, table: Record<string, number | [number, number]>): void {
  for (const k in table) {
    if (MAPPINGS.has(k)) throw new Error(`parameter ${k} mapped twice`)
    const c = table[k]!
    MAPPINGS.set(k, typeof c === 'number' ? { kind, col: c, col2: -1 } : { kind, col: c[0], col2: c[1] })
  }
}
addMappings(K_STR, STR)
addMappings(K_INT, INT)
addMappings(K_DEC, DEC)
addMappings(K_BOOL, BOOL)
addMappings(K_TS, TS)
addMappings(K_DIMS, DIMS)
addMappings(K_E, { e: F.event })
addMappings(K_P, { p: F.platform })
addMappings(K_IP, { ip: F.user_ipaddress })
addMappings(K_EID, { eid: F.event_id })
addMappings(K_SID, { sid: F.domain_sessionid })
addMappings(K_TNUID, { tnuid: -1 })
addMappings(K_UE_PR, { ue_pr: -1 })
addMappings(K_UE_PX, { ue_px: -1 })
addMappings(K_CO, { co: -1 })
addMappings(K_CX, { cx: -1 })

/**
 * The mapping of the parameter at each position of the last events seen:
 * trackers send their parameters in the same order event after event, and
 * comparing a key with the one seen at its position is cheaper than a map lookup.
 */
const POSITIONS = 64
const keysAt: (string | undefined)[] = new Array<string | undefined>(POSITIONS).fill(undefined)
const mappingsAt: (Mapping | undefined)[] = new Array<Mapping | undefined>(POSITIONS).fill(undefined)

function mappingAt(k: string, position: number): Mapping | undefined {
  if (position >= POSITIONS) return MAPPINGS.get(k)
  if (keysAt[position] === k) return mappingsAt[position]
  const m = MAPPINGS.get(k)
  keysAt[position] = k
  mappingsAt[position] = m
  return m
}

const TAB_CR_LF = /[\t\r\n]/

/** Removes CR and LF and turns tabs into 4 spaces (the collector's user agent). */
function cleanUserAgent(s: string): string | null {
  const out = TAB_CR_LF.test(s) ? s.replace(/\t/g, '    ').replace(/[\r\n]/g, '') : s
  return out.length === 0 ? null : out
}

function parseError(errors: AtomicError[], field: string, value: string, error: string): void {
  errors.push({ field, value, message: error, keyword: 'atomic_field_parse_error' })
}

interface ParamState {
  unstruct: string | null
  contexts: string | null
  tnuid: string | undefined
}

/** Maps one tracker parameter onto its column(s). */
function mapParam(k: string, v: string, ev: EnrichedEvent, errors: AtomicError[], st: ParamState, controlFree: boolean, ascii: boolean, position: number): void {
  const f = ev.f
  const m = mappingAt(k, position)
  if (m === undefined) return
  let c: Conv<string | number>
  switch (m.kind) {
    case K_STR: f[m.col] = controlFree ? (v === '' ? null : v) : tsv(v); return
    case K_INT: c = toInt(v); break
    case K_DEC: c = toDecimal(v); break
    case K_BOOL: c = toBool(v); break
    case K_TS: {
      const ms = plainMillis(v)
      if (ms !== ms) {
        c = toTimestamp(v)
        break
      }
      const text = formatTimestamp(ms)
      f[m.col] = text
      if (ms >= YEAR_100) {
        if (m.col === F.dvce_created_tstamp) {
          ev.createdText = text
          ev.createdMs = ms
        } else if (m.col === F.dvce_sent_tstamp) {
          ev.sentText = text
          ev.sentMs = ms
        }
      }
      return
    }
    case K_DIMS: {
      const d = toDims(v)
      if (d.ok) {
        f[m.col] = d.value[0]
        f[m.col2] = d.value[1]
      } else parseError(errors, k, v, d.error)
      return
    }
    case K_E: c = toEventType(v); break
    case K_P: c = toPlatform(v); break
    case K_IP: f[m.col] = toIp(v); return
    case K_EID: c = toUuid(v); break
    case K_SID: c = toUuid(v); break
    case K_TNUID: st.tnuid = v; return
    case K_UE_PR: st.unstruct = v; return
    case K_UE_PX: st.unstruct = base64Text(v, ascii); return
    case K_CO: st.contexts = v; return
    case K_CX: st.contexts = base64Text(v, ascii); return
    default: return
  }
  if (c.ok) f[m.col] = c.value
  else parseError(errors, k, v, c.error)
}

/** Sets the defaults from the request, then maps every parameter. */
export function transform(raw: RawEvent, ev: EnrichedEvent, setup: SetupContext): Transformed {
  const f = ev.f
  const p = raw.payload
  const errors: AtomicError[] = []
  f[F.event_id] = setup.eventId
  f[F.v_collector] = p.collector === null ? null : tsv(p.collector)
  f[F.v_etl] = setup.vEtl
  f[F.etl_tstamp] = setup.etlTimestamp
  f[F.network_userid] = p.networkUserId
  f[F.user_ipaddress] = p.ipAddress === null ? null : toIp(p.ipAddress)
  f[F.useragent] = p.userAgent === null ? null : cleanUserAgent(p.userAgent)
  const ct = formatTimestamp(p.timestamp)
  if (p.timestamp < -62167219200000 || p.timestamp >= 253402300800000) {
    const ms = BigInt(Math.trunc(p.timestamp))
    errors.push({ field: 'collector_tstamp', value: longTimestampText(ms, true), message: `Formatted as ${longTimestampText(ms)} is not Redshift-compatible`, keyword: 'atomic_field_parse_error' })
  } else {
    f[F.collector_tstamp] = ct
    if (p.timestamp >= YEAR_100 && Number.isInteger(p.timestamp)) {
      ev.collectorText = ct
      ev.collectorMs = p.timestamp
    }
  }

  const st: ParamState = { unstruct: null, contexts: null, tnuid: undefined }
  const fields = raw.fields
  if (fields !== undefined) {
    const controlFree = raw.controlFree === true
    const ascii = raw.ascii === true
    let position = 0
    for (const k in fields) mapParam(k, fields[k]!, ev, errors, st, controlFree, ascii, position++)
  } else {
    let position = 0
    for (const [k, v] of raw.parameters) if (v !== null) mapParam(k, v, ev, errors, st, false, false, position++)
  }
  const { unstruct, contexts, tnuid } = st
  if (tnuid !== undefined) f[F.network_userid] = tsv(tnuid)
  return { errors, unstruct, contexts }
}
