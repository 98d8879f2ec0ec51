/**
 * Phase 1 of enrichment: tracker parameters → atomic fields (every conversion
 * error collected), and the raw `ue_*` / `co` / `cx` texts for validation.
 */
import type { RawEvent } from './adapters'
import { base64Text, formatTimestamp, toBool, toDecimal, toDims, toEventType, toInt, toIp, toPlatform, toTimestamp, toUuid, tsv, type Conv } from './convert'
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
const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k)

/** Removes CR and LF and turns tabs into 4 spaces (the collector's user agent). */
function cleanUserAgent(s: string): string | null {
  const out = s.replace(/\t/g, '    ').replace(/[\r\n]/g, '')
  return out.length === 0 ? null : out
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
    errors.push({ field: 'collector_tstamp', value: String(p.timestamp), message: `Formatted as ${ct} is not Redshift-compatible`, keyword: 'atomic_field_parse_error' })
  } else f[F.collector_tstamp] = ct

  let unstruct: string | null = null
  let contexts: string | null = null
  let tnuid: string | undefined
  const fail = (field: string, value: string, c: { ok: false; error: string }) =>
    errors.push({ field, value, message: c.error, keyword: 'atomic_field_parse_error' })
  const apply = <T extends string | number>(field: string, value: string, c: Conv<T>, idx: number) => {
    if (c.ok) f[idx] = c.value
    else fail(field, value, c)
  }

  for (const [k, v] of raw.parameters) {
    if (v === null) continue
    if (has(STR, k)) f[STR[k]!] = tsv(v)
    else if (has(INT, k)) apply(k, v, toInt(v), INT[k]!)
    else if (has(DEC, k)) apply(k, v, toDecimal(v), DEC[k]!)
    else if (has(BOOL, k)) apply(k, v, toBool(v), BOOL[k]!)
    else if (has(TS, k)) apply(k, v, toTimestamp(v), TS[k]!)
    else if (has(DIMS, k)) {
      const d = toDims(v)
      if (d.ok) {
        f[DIMS[k]![0]] = d.value[0]
        f[DIMS[k]![1]] = d.value[1]
      } else fail(k, v, d)
    } else {
      switch (k) {
        case 'e': apply(k, v, toEventType(v), F.event); break
        case 'p': apply(k, v, toPlatform(v), F.platform); break
        case 'ip': f[F.user_ipaddress] = toIp(v); break
        case 'eid': apply(k, v, toUuid(v), F.event_id); break
        case 'sid': apply(k, v, toUuid(v), F.domain_sessionid); break
        case 'tnuid': tnuid = v; break
        case 'ue_pr': unstruct = v; break
        case 'ue_px': unstruct = base64Text(v); break
        case 'co': contexts = v; break
        case 'cx': contexts = base64Text(v); break
      }
    }
  }
  if (tnuid !== undefined) f[F.network_userid] = tsv(tnuid)
  return { errors, unstruct, contexts }
}
