/**
 * `ua_parser_config`: the `ua_parser_context` of the `useragent`, with
 * ua-parser's rules: uap-core's `regexes.yaml` by default (the `uap-core`
 * package), or a rules file named by `uri` + `database`. Answers are cached
 * per user agent (5,000, least recently used first out).
 */
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { F } from '../fields'
import { quote } from '../json'
import type { Enrichment, StepResult } from '../steps'
import { assetOf, ConfigError, ORDER, type EnrichmentModule } from './module'

const SCHEMA = 'iglu:com.snowplowanalytics.snowplow/ua_parser_context/jsonschema/1-0-0'
const CACHE_SIZE = 5000

interface Rule {
  readonly re: RegExp
  readonly replacements: readonly (string | undefined)[]
}

export interface UaRules {
  readonly agents: readonly Rule[]
  readonly os: readonly Rule[]
  readonly devices: readonly Rule[]
}

/** Reads rules in uap-core's YAML format; throws `ConfigError` naming what is wrong. */
export function loadRules(yamlText: string, where: string): UaRules {
  let doc: unknown
  try {
    doc = parseYaml(yamlText)
  } catch (err) {
    throw new ConfigError(`${where} is not YAML: ${(err as Error).message}`)
  }
  const d = doc as Record<string, unknown>
  if (d === null || typeof d !== 'object' || !Array.isArray(d.user_agent_parsers) || !Array.isArray(d.os_parsers) || !Array.isArray(d.device_parsers)) {
    throw new ConfigError(`${where} does not hold ua-parser rules (user_agent_parsers, os_parsers and device_parsers)`)
  }
  const rules = (list: unknown[], keys: readonly string[], kind: string): Rule[] =>
    list.map((r, i) => {
      const x = r as Record<string, unknown>
      if (typeof x?.regex !== 'string') throw new ConfigError(`${where}: ${kind}[${i}] has no regex`)
      try {
        return { re: new RegExp(x.regex, x.regex_flag === 'i' ? 'i' : ''), replacements: keys.map((k) => (x[k] === undefined ? undefined : String(x[k]))) }
      } catch (err) {
        throw new ConfigError(`${where}: ${kind}[${i}] is not a valid regular expression: ${(err as Error).message}`)
      }
    })
  return {
    agents: rules(d.user_agent_parsers, ['family_replacement', 'v1_replacement', 'v2_replacement', 'v3_replacement'], 'user_agent_parsers'),
    os: rules(d.os_parsers, ['os_replacement', 'os_v1_replacement', 'os_v2_replacement', 'os_v3_replacement', 'os_v4_replacement'], 'os_parsers'),
    devices: rules(d.device_parsers, ['device_replacement'], 'device_parsers'),
  }
}

/** A replacement with `$1`…`$9` filled in from the match, trimmed; empty means none. */
function fill(replacement: string, m: RegExpExecArray): string | null {
  const v = replacement.replace(/\$(\d)/g, (_s, n: string) => m[Number(n)] ?? '').trim()
  return v === '' ? null : v
}

/** The fields of the first matching rule: each a replacement, else the matching group (position i + 1). */
function first(rules: readonly Rule[], ua: string, count: number): (string | null)[] | undefined {
  for (const r of rules) {
    const m = r.re.exec(ua)
    if (m === null) continue
    const out: (string | null)[] = []
    for (let i = 0; i < count; i++) {
      const rep = r.replacements[i]
      out.push(rep !== undefined ? fill(rep, m) : m[i + 1] === undefined || m[i + 1] === '' ? null : m[i + 1]!)
    }
    return out
  }
  return undefined
}

export interface UaParserContext {
  useragentFamily: string | null
  useragentMajor: string | null
  useragentMinor: string | null
  useragentPatch: string | null
  useragentVersion: string | null
  osFamily: string | null
  osMajor: string | null
  osMinor: string | null
  osPatch: string | null
  osPatchMinor: string | null
  osVersion: string | null
  deviceFamily: string | null
}

const version = (family: string | null, ...parts: (string | null)[]) =>
  (family ?? '') + parts.map((p, i) => (p === null ? '' : `${i === 0 ? ' ' : '.'}${p}`)).join('')

export function parseUserAgent(rules: UaRules, ua: string): UaParserContext {
  const [family, major, minor, patch] = first(rules.agents, ua, 4) ?? ['Other', null, null, null]
  const [os, osMajor, osMinor, osPatch, osPatchMinor] = first(rules.os, ua, 5) ?? ['Other', null, null, null, null]
  const [device] = first(rules.devices, ua, 1) ?? ['Other']
  return {
    useragentFamily: family ?? 'Other',
    useragentMajor: major!,
    useragentMinor: minor!,
    useragentPatch: patch!,
    useragentVersion: version(family ?? 'Other', major!, minor!, patch!),
    osFamily: os ?? 'Other',
    osMajor: osMajor!,
    osMinor: osMinor!,
    osPatch: osPatch!,
    osPatchMinor: osPatchMinor!,
    osVersion: version(os ?? 'Other', osMajor!, osMinor!, osPatch!, osPatchMinor!),
    deviceFamily: device ?? 'Other',
  }
}

const FIELDS = ['useragentFamily', 'useragentMajor', 'useragentMinor', 'useragentPatch', 'useragentVersion', 'osFamily', 'osMajor', 'osMinor', 'osPatch', 'osPatchMinor', 'osVersion', 'deviceFamily'] as const

/** uap-core's rules, read once. */
let defaultRules: UaRules | undefined
async function uapCoreRules(): Promise<UaRules> {
  if (!defaultRules) {
    const { packageFile } = await import('../../package-files')
    const file = packageFile('uap-core/regexes.yaml')
    defaultRules = loadRules(readFileSync(file, 'utf8'), file)
  }
  return defaultRules
}

export const uaParser: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'ua_parser_config',
  models: [1],
  assets: (config) => assetOf('database', config.parameters),
  async create(config, ctx): Promise<Enrichment> {
    const custom = assetOf('database', config.parameters)[0]
    const rules = custom ? loadRules(readFileSync(ctx.assets.path(custom.location), 'utf8'), custom.location) : await uapCoreRules()
    const cache = new Map<string, StepResult>()
    return {
      id: 'ua-parser',
      order: ORDER.uaParser,
      run(ev) {
        const ua = ev.f[F.useragent] as string | null
        if (ua === null) return {}
        let r = cache.get(ua)
        if (r !== undefined) {
          // most recently used last
          cache.delete(ua)
          cache.set(ua, r)
          return r
        }
        const c = parseUserAgent(rules, ua)
        r = { contexts: [{ schema: SCHEMA, data: `{${FIELDS.map((k) => `"${k}":${c[k] === null ? 'null' : quote(c[k]!)}`).join(',')}}` }] }
        cache.set(ua, r)
        if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string)
        return r
      },
    }
  },
}
