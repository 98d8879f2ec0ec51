/**
 * `yauaa_enrichment_config`: the `nl.basjes/yauaa_context` of the user agent
 * and the request's client hints (`Sec-CH-UA*` headers), with the field names
 * and conventions of YAUAA (`Unknown` for an unknown name or class, `??` for
 * an unknown version, `<name> <version>` and `…Major` combinations), computed
 * by node-device-detector (a maintained port of Matomo's device detector).
 * YAUAA itself is a Java library: which fields match it exactly and which are
 * approximations is in the README; `test/unit/enrich/enrichments/yauaa.test.ts`
 * holds the table of real user agents they are checked on. Answers are
 * cached per user agent and client hints (`cacheSize`, default 10,000).
 */
import { F } from '../fields'
import { quote } from '../json'
import type { Enrichment, StepResult } from '../steps'
import { ORDER, type EnrichmentModule } from './module'

export const YAUAA_SCHEMA = 'iglu:nl.basjes/yauaa_context/jsonschema/1-0-5'
const DEFAULT_CACHE_SIZE = 10_000
/** Longer user agents are analysed on their first characters (the detector's regular expressions are not linear-time). */
const MAX_UA_LENGTH = 1000

export type YauaaFields = Record<string, string>

interface Detected {
  os: { name?: string; version?: string; platform?: string; family?: string }
  client: { type?: string; name?: string; version?: string; engine?: string; engine_version?: string; family?: string }
  device: { type?: string; brand?: string; model?: string; code?: string }
}
interface Bot {
  name?: string
  category?: string
  url?: string
  producer?: { name?: string }
}
interface Detector {
  detect(ua: string, hints?: unknown): Detected
  parseBot(ua: string): Bot
}
interface HintsParser {
  parse(headers: Record<string, string>, meta?: object): unknown
}

let detector: { dd: Detector; hints: HintsParser } | undefined
/** Loads the detector once (on first use, so a deployment without this enrichment never loads its rules). */
export async function loadDetector(): Promise<void> {
  if (detector) return
  const [{ default: DeviceDetector }, { default: ClientHints }] = await Promise.all([import('node-device-detector'), import('node-device-detector/client-hints')])
  detector = {
    dd: new (DeviceDetector as unknown as new (o: object) => Detector)({ clientIndexes: true, deviceIndexes: true, deviceAliasCode: true, maxUserAgentSize: MAX_UA_LENGTH }),
    hints: new (ClientHints as unknown as new () => HintsParser)(),
  }
}
function load(): { dd: Detector; hints: HintsParser } {
  if (!detector) throw new Error('the user-agent detector is not loaded (call loadDetector first)')
  return detector
}

const UNKNOWN = 'Unknown'
const NO_VERSION = '??'
const major = (v: string) => (v === NO_VERSION ? NO_VERSION : (/^[^.\s_]+/.exec(v)?.[0] ?? v))
const orUnknown = (s: string | undefined) => (s === undefined || s === '' ? UNKNOWN : s)
const orNoVersion = (s: string | undefined) => (s === undefined || s === '' ? NO_VERSION : s)

const DEVICE_CLASSES: Record<string, string> = {
  desktop: 'Desktop', smartphone: 'Phone', phablet: 'Phone', tablet: 'Tablet', 'feature phone': 'Mobile', console: 'Game Console',
  'portable media player': 'Mobile', tv: 'TV', 'car browser': 'Car', 'smart display': 'TV', wearable: 'Watch', 'smart speaker': 'Voice', camera: 'Mobile', peripheral: UNKNOWN,
}
const APPLE_KINDS: Record<string, string> = { smartphone: 'iPhone', tablet: 'iPad', desktop: 'Macintosh' }
const OS_NAMES: Record<string, string> = { Windows: 'Windows NT', Mac: 'Mac OS', 'GNU/Linux': 'Linux', 'Chrome OS': 'ChromeOS', PlayStation: 'PlayStation', 'iPadOS': 'iOS' }
const DESKTOP_OS = new Set(['Windows', 'Mac', 'GNU/Linux', 'Chrome OS', 'Unix', 'BSD'])
const MOBILE_OS = new Set(['Android', 'iOS', 'Windows Mobile', 'BlackBerry', 'Symbian', 'Firefox OS', 'KaiOS', 'HarmonyOS', 'Tizen', 'Ubuntu Touch', 'webOS'])
const AGENT_NAMES: Record<string, string> = {
  'Mobile Safari': 'Safari', 'Android Browser': 'Stock Android Browser', 'Chrome Mobile': 'Chrome', 'Chrome Webview': 'Chrome', 'Chrome Mobile iOS': 'Chrome',
  'Firefox Mobile': 'Firefox', 'Firefox Mobile iOS': 'Firefox', 'Microsoft Edge': 'Edge', 'Opera Mobile': 'Opera', 'Samsung Browser': 'Samsung Internet',
}
const WINDOWS_NT: Record<string, string> = { '11': '11.0', '10': '10.0', '8.1': '6.3', '8': '6.2', '7': '7', Vista: 'Vista', XP: 'XP', '2000': '2000' }
const AGENT_CLASSES: Record<string, string> = { browser: 'Browser', 'mobile app': 'Mobile App', library: 'Special', 'feed reader': 'Special', 'media player': 'Special', pim: 'Email Client' }

/** `name version` and `name major` combinations, as YAUAA builds them. */
function combos(out: YauaaFields, prefix: string, name: string, version: string): void {
  out[`${prefix}Name`] = name
  out[`${prefix}Version`] = version
  out[`${prefix}VersionMajor`] = major(version)
  out[`${prefix}NameVersion`] = `${name} ${version}`
  out[`${prefix}NameVersionMajor`] = `${name} ${major(version)}`
}

/** Chrome's reduced user agent (`106.0.0.0`) carries only the major version. */
const reduced = (v: string) => /^(\d+)\.0\.0\.0$/.exec(v)?.[1] ?? v

const LIMITS: Record<string, number> = { deviceClass: 128, deviceBrand: 128, deviceCpu: 128, deviceCpuBits: 128, operatingSystemClass: 128, layoutEngineClass: 128, agentClass: 128, agentSecurity: 128, deviceName: 256, operatingSystemName: 256, layoutEngineName: 256, agentName: 256 }

/** The YAUAA fields of a user agent and its client hints (header names in lower case). */
export function analyseUserAgent(userAgent: string | null, headers: Record<string, string> = {}): YauaaFields {
  if (userAgent === null || userAgent === '') return { deviceClass: UNKNOWN }
  const { dd, hints } = load()
  const ua = userAgent.length > MAX_UA_LENGTH ? userAgent.slice(0, MAX_UA_LENGTH) : userAgent
  const out: YauaaFields = {}
  const bot = dd.parseBot(ua)
  if (bot.name) {
    const brand = orUnknown(bot.producer?.name?.replace(/,?\s+(Inc|LLC|Ltd|GmbH|Corp|Corporation|S\.A|AG|B\.V)\.?$/i, ''))
    const cls = /mobile|android|iphone/i.test(ua) ? 'Robot Mobile' : 'Robot'
    out.deviceClass = cls
    out.deviceName = brand
    out.deviceBrand = brand
    out.operatingSystemClass = 'Cloud'
    combos(out, 'operatingSystem', brand === UNKNOWN ? 'Cloud' : `${brand} Cloud`, NO_VERSION)
    out.layoutEngineClass = 'Robot'
    combos(out, 'layoutEngine', UNKNOWN, NO_VERSION)
    out.agentClass = cls
    const version = new RegExp(`${bot.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([0-9][0-9A-Za-z.]*)`, 'i').exec(ua)?.[1]
    combos(out, 'agent', bot.name, orNoVersion(version))
    const url = /\+?(https?:\/\/[^\s;)]+)/.exec(ua)?.[1]
    if (url) out.agentInformationUrl = url
  } else {
    const chHeaders = Object.keys(headers).some((h) => h.startsWith('sec-ch-ua'))
    const r = dd.detect(ua, chHeaders ? hints.parse(headers) : undefined)
    const brand = orUnknown(r.device.brand)
    const osName = r.os.name ? (OS_NAMES[r.os.name] ?? r.os.name) : UNKNOWN
    const type = r.device.type ?? ''
    out.deviceClass = DEVICE_CLASSES[type] ?? UNKNOWN
    // YAUAA names a device by its model code (SM-G960F), but Apple devices by kind: every iPhone is an "iPhone"
    const code = r.device.code && brand !== UNKNOWN && r.device.code.toLowerCase().startsWith(`${brand.toLowerCase()} `) ? r.device.code.slice(brand.length + 1) : r.device.code
    const model = brand === 'Apple' ? (APPLE_KINDS[type] ?? r.device.model) : code || r.device.model
    out.deviceName = model ? `${brand === UNKNOWN ? '' : `${brand} `}${model}` : out.deviceClass === 'Desktop' ? (r.os.family === 'Mac' ? 'Apple Macintosh' : r.os.family === 'GNU/Linux' ? 'Linux Desktop' : 'Desktop') : UNKNOWN
    out.deviceBrand = brand
    if (r.os.platform === 'x64') [out.deviceCpu, out.deviceCpuBits] = ['Intel x86_64', '64']
    else if (r.os.platform === 'x86') [out.deviceCpu, out.deviceCpuBits] = ['Intel i686', '32']
    else if (r.os.platform === 'ARM') out.deviceCpu = 'ARM'
    const family = r.os.family ?? ''
    out.operatingSystemClass = type === 'console' ? 'Game Console' : DESKTOP_OS.has(family) ? 'Desktop' : MOBILE_OS.has(family) || MOBILE_OS.has(r.os.name ?? '') ? 'Mobile' : type === 'tv' ? 'Embedded' : UNKNOWN
    const osVersion = orNoVersion(r.os.name === 'Windows' ? (WINDOWS_NT[r.os.version ?? ''] ?? r.os.version) : r.os.version)
    combos(out, 'operatingSystem', osName, osVersion)
    const build = /\bBuild\/([A-Za-z0-9._-]+)/.exec(ua)?.[1]
    if (build) out.operatingSystemVersionBuild = build
    const engine = r.client.engine
    out.layoutEngineClass = engine ? 'Browser' : UNKNOWN
    const engineName = engine === 'WebKit' ? 'AppleWebKit' : orUnknown(engine)
    // Blink's version is the browser's major.minor
    const blink = engine === 'Blink' ? (/Chrome\/(\d+\.\d+)/.exec(ua)?.[1] ?? r.client.engine_version?.split('.').slice(0, 2).join('.')) : undefined
    combos(out, 'layoutEngine', engineName, orNoVersion(engine === 'Blink' ? blink : r.client.engine_version))
    const webview = /; wv\)/.test(ua)
    out.agentClass = r.client.type === 'browser' && webview ? 'Browser Webview' : (AGENT_CLASSES[r.client.type ?? ''] ?? UNKNOWN)
    const name = r.client.name ? (AGENT_NAMES[r.client.name] ?? r.client.name) : UNKNOWN
    combos(out, 'agent', name, orNoVersion(r.client.version ? reduced(r.client.version) : undefined))
    const lang = /[;(]\s*([a-z]{2}(?:[-_][A-Za-z]{2})?)\s*[;)]/.exec(ua)?.[1]
    if (lang !== undefined && lang !== 'wv') out.agentLanguageCode = lang.toLowerCase().replace('_', '-')
  }
  out.agentInformationEmail = UNKNOWN
  out.networkType = UNKNOWN
  combos(out, 'webviewApp', UNKNOWN, NO_VERSION)
  for (const [k, max] of Object.entries(LIMITS)) if (out[k] !== undefined && out[k]!.length > max) out[k] = out[k]!.slice(0, max)
  return out
}

/** The headers the analysis reads (client hints), by lower-case name, from `Name: value` lines. */
export function clientHints(headers: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const h of headers) {
    const i = h.indexOf(': ')
    if (i < 0) continue
    const name = h.slice(0, i).toLowerCase()
    if (name.startsWith('sec-ch-ua')) out[name] = h.slice(i + 2).replace(/^\s+/, '')
  }
  return out
}

/** Whether any header is a client hint (`Sec-CH-UA…`, any case), as `clientHints` finds them, without building anything. */
export function hasClientHints(headers: readonly string[]): boolean {
  for (const h of headers) {
    if (h.length > 9 && (h.charCodeAt(0) | 32) === 115 && h.indexOf(': ') >= 9 && h.slice(0, 9).toLowerCase() === 'sec-ch-ua') return true
  }
  return false
}

const fieldsData = (f: YauaaFields) => `{${Object.keys(f).sort().map((k) => `${quote(k)}:${quote(f[k]!)}`).join(',')}}`

export const yauaa: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow.enrichments',
  name: 'yauaa_enrichment_config',
  models: [1],
  async create(config): Promise<Enrichment> {
    await loadDetector()
    const size = typeof config.parameters.cacheSize === 'number' && config.parameters.cacheSize > 0 ? config.parameters.cacheSize : DEFAULT_CACHE_SIZE
    // Answers by user agent alone (most requests send no client hints), and by user agent and hints.
    const plain = new Map<string, StepResult>()
    const hinted = new Map<string, StepResult>()
    return {
      id: 'yauaa',
      order: ORDER.yauaa,
      run(ev, input) {
        const ua = ev.f[F.useragent] as string | null
        const headers = input.raw.payload.headers
        const hints = hasClientHints(headers) ? clientHints(headers) : undefined
        const cache = hints === undefined ? plain : hinted
        const key = hints === undefined ? (ua ?? '') : `${ua ?? ''}\u0000${Object.entries(hints).map(([k, v]) => `${k}:${v}`).join('\u0000')}`
        let r = cache.get(key)
        if (r !== undefined) {
          cache.delete(key)
          cache.set(key, r)
          return r
        }
        r = { contexts: [{ schema: YAUAA_SCHEMA, data: fieldsData(analyseUserAgent(ua, hints ?? {})) }] }
        cache.set(key, r)
        if (cache.size > size) cache.delete(cache.keys().next().value as string)
        return r
      },
    }
  },
}
