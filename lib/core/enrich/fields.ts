/**
 * The 131 columns of the enriched event, in TSV order, with the kind of value
 * each holds and the default maximum length of the string ones
 * (`validation.atomicFieldsLimits` overrides these).
 */

/** How a column's value is held and written. */
export type FieldKind =
  | 'string' // text, written as is
  | 'int' // 32-bit integer
  | 'bool' // 0 / 1
  | 'float' // Java float text (geo_latitude / geo_longitude)
  | 'dec' // decimal, held as its Java BigDecimal text
  | 'ts' // timestamp `yyyy-MM-dd HH:mm:ss.SSS`
  | 'json' // contexts / unstruct_event / derived_contexts

const S = (limit: number) => ({ kind: 'string' as const, limit })
const K = (kind: Exclude<FieldKind, 'string'>) => ({ kind, limit: undefined })

/** [name, kind, default limit]. Order is the TSV order. */
const COLUMNS = [
  ['app_id', S(255)], ['platform', S(255)], ['etl_tstamp', K('ts')], ['collector_tstamp', K('ts')], ['dvce_created_tstamp', K('ts')],
  ['event', S(128)], ['event_id', S(36)], ['txn_id', K('int')], ['name_tracker', S(128)], ['v_tracker', S(100)],
  ['v_collector', S(100)], ['v_etl', S(100)], ['user_id', S(255)], ['user_ipaddress', S(128)], ['user_fingerprint', S(128)],
  ['domain_userid', S(128)], ['domain_sessionidx', K('int')], ['network_userid', S(128)], ['geo_country', S(2)], ['geo_region', S(3)],
  ['geo_city', S(75)], ['geo_zipcode', S(15)], ['geo_latitude', K('float')], ['geo_longitude', K('float')], ['geo_region_name', S(100)],
  ['ip_isp', S(100)], ['ip_organization', S(128)], ['ip_domain', S(128)], ['ip_netspeed', S(100)], ['page_url', S(10000)],
  ['page_title', S(2000)], ['page_referrer', S(10000)], ['page_urlscheme', S(16)], ['page_urlhost', S(255)], ['page_urlport', K('int')],
  ['page_urlpath', S(3000)], ['page_urlquery', S(6000)], ['page_urlfragment', S(3000)], ['refr_urlscheme', S(16)], ['refr_urlhost', S(255)],
  ['refr_urlport', K('int')], ['refr_urlpath', S(6000)], ['refr_urlquery', S(6000)], ['refr_urlfragment', S(3000)], ['refr_medium', S(25)],
  ['refr_source', S(50)], ['refr_term', S(255)], ['mkt_medium', S(255)], ['mkt_source', S(255)], ['mkt_term', S(255)],
  ['mkt_content', S(500)], ['mkt_campaign', S(255)], ['contexts', K('json')], ['se_category', S(1000)], ['se_action', S(1000)],
  ['se_label', S(4096)], ['se_property', S(1000)], ['se_value', K('dec')], ['unstruct_event', K('json')], ['tr_orderid', S(255)],
  ['tr_affiliation', S(255)], ['tr_total', K('dec')], ['tr_tax', K('dec')], ['tr_shipping', K('dec')], ['tr_city', S(255)],
  ['tr_state', S(255)], ['tr_country', S(255)], ['ti_orderid', S(255)], ['ti_sku', S(255)], ['ti_name', S(255)],
  ['ti_category', S(255)], ['ti_price', K('dec')], ['ti_quantity', K('int')], ['pp_xoffset_min', K('int')], ['pp_xoffset_max', K('int')],
  ['pp_yoffset_min', K('int')], ['pp_yoffset_max', K('int')], ['useragent', S(1000)], ['br_name', S(50)], ['br_family', S(50)],
  ['br_version', S(50)], ['br_type', S(50)], ['br_renderengine', S(50)], ['br_lang', S(255)], ['br_features_pdf', K('bool')],
  ['br_features_flash', K('bool')], ['br_features_java', K('bool')], ['br_features_director', K('bool')], ['br_features_quicktime', K('bool')], ['br_features_realplayer', K('bool')],
  ['br_features_windowsmedia', K('bool')], ['br_features_gears', K('bool')], ['br_features_silverlight', K('bool')], ['br_cookies', K('bool')], ['br_colordepth', S(12)],
  ['br_viewwidth', K('int')], ['br_viewheight', K('int')], ['os_name', S(50)], ['os_family', S(50)], ['os_manufacturer', S(50)],
  ['os_timezone', S(255)], ['dvce_type', S(50)], ['dvce_ismobile', K('bool')], ['dvce_screenwidth', K('int')], ['dvce_screenheight', K('int')],
  ['doc_charset', S(128)], ['doc_width', K('int')], ['doc_height', K('int')], ['tr_currency', S(3)], ['tr_total_base', K('dec')],
  ['tr_tax_base', K('dec')], ['tr_shipping_base', K('dec')], ['ti_currency', S(3)], ['ti_price_base', K('dec')], ['base_currency', S(3)],
  ['geo_timezone', S(64)], ['mkt_clickid', S(1000)], ['mkt_network', S(64)], ['etl_tags', S(500)], ['dvce_sent_tstamp', K('ts')],
  ['refr_domain_userid', S(128)], ['refr_dvce_tstamp', K('ts')], ['derived_contexts', K('json')], ['domain_sessionid', S(128)], ['derived_tstamp', K('ts')],
  ['event_vendor', S(1000)], ['event_name', S(1000)], ['event_format', S(128)], ['event_version', S(128)], ['event_fingerprint', S(128)],
  ['true_tstamp', K('ts')],
] as const

export type FieldName = (typeof COLUMNS)[number][0]

/** Column names in TSV order. */
export const FIELDS: readonly FieldName[] = COLUMNS.map((c) => c[0])
export const FIELD_COUNT = FIELDS.length

/** Column index by name. */
export const F = Object.fromEntries(FIELDS.map((f, i) => [f, i])) as { readonly [K in FieldName]: number }

export const FIELD_KINDS: readonly FieldKind[] = COLUMNS.map((c) => c[1].kind)

/** Default maximum lengths (UTF-16 code units) of the string columns. */
export const DEFAULT_FIELD_LIMITS: Readonly<Record<string, number>> = Object.fromEntries(
  COLUMNS.flatMap((c) => (c[1].limit === undefined ? [] : [[c[0], c[1].limit]])),
)

/** Columns never nulled when too long in a failed event. */
export const NEVER_NULLED: ReadonlySet<string> = new Set(['event_id', 'v_collector', 'v_etl'])

export function isFieldName(s: string): s is FieldName {
  return Object.prototype.hasOwnProperty.call(F, s)
}
