/**
 * snowplow-event-recovery configurations
 * (`iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/2-0-0` …
 * `4-1-0`): `data` maps bad-row schema keys (any version part may be `*`)
 * to flows `{name, conditions, steps}`. Parsed and checked here, with every
 * path and regex compiled up front, so a document is refused with the place
 * of its first faults rather than failing row by row.
 */
import { parsePath, type JsonPath } from './jsonpath'
import { recoveryRegex, type RecoveryRegex } from './regex'

export const RECOVERIES_SCHEMA = /^iglu:com\.snowplowanalytics\.snowplow\/recoveries\/jsonschema\/(2-0-0|2-0-1|3-0-0|4-0-0|4-1-0)$/

export type Matcher =
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'regex'; readonly re: RecoveryRegex }
  | { readonly kind: 'size'; readonly op: 'eq' | 'gt' | 'lt'; readonly n: number }

export interface Condition {
  readonly path: JsonPath
  readonly matcher: Matcher
}

export type CastType = 'String' | 'Numeric' | 'Boolean' | 'Array'

export type RecoveryStep =
  | { readonly op: 'Replace'; readonly path: JsonPath; readonly match?: RecoveryRegex; readonly value: unknown }
  | { readonly op: 'Remove'; readonly path: JsonPath; readonly match?: RecoveryRegex }
  | { readonly op: 'Cast'; readonly path: JsonPath; readonly from: CastType; readonly to: CastType }
  | { readonly op: 'Add'; readonly path: JsonPath; readonly value: unknown }

export interface Flow {
  readonly name: string
  readonly conditions: readonly Condition[]
  readonly steps: readonly RecoveryStep[]
}

/** A bad-row schema key with `*` for any version part. */
export interface FlowKey {
  readonly vendor: string
  readonly name: string
  readonly version: readonly (number | '*')[]
  readonly flows: readonly Flow[]
}

export interface RecoveryConfig {
  readonly schema: string
  readonly keys: readonly FlowKey[]
}

export type ConfigResult = { readonly ok: true; readonly value: RecoveryConfig } | { readonly ok: false; readonly errors: readonly string[] }

const CASTS = new Set(['String', 'Numeric', 'Boolean', 'Array'])
const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined)

/** True for a self-describing document of the recoveries schema (whatever its content). */
export function isEventRecoveryConfig(doc: unknown): boolean {
  const s = obj(doc)?.schema
  return typeof s === 'string' && s.startsWith('iglu:com.snowplowanalytics.snowplow/recoveries/')
}

function regexAt(at: string, pattern: unknown): RecoveryRegex {
  if (typeof pattern !== 'string') throw new Error(`${at}: a regex string is expected`)
  try {
    return recoveryRegex(pattern)
  } catch (err) {
    throw new Error(`${at}: ${(err as Error).message}`)
  }
}

function pathAt(at: string, p: unknown): JsonPath {
  if (typeof p !== 'string') throw new Error(`${at}/path: a JSON path string is expected`)
  try {
    return parsePath(p)
  } catch (err) {
    throw new Error(`${at}/path: ${(err as Error).message}`)
  }
}

function matcherAt(at: string, v: unknown): Matcher {
  const o = obj(v)
  if (o && Object.keys(o).length === 1 && 'value' in o) return { kind: 'value', value: o.value }
  if (o && Object.keys(o).length === 1 && 'regex' in o) return { kind: 'regex', re: regexAt(`${at}/value/regex`, o.regex) }
  const size = obj(o?.size)
  if (o && Object.keys(o).length === 1 && size && Object.keys(size).length === 1) {
    const [op, n] = Object.entries(size)[0]!
    if ((op === 'eq' || op === 'gt' || op === 'lt') && Number.isInteger(n)) return { kind: 'size', op, n: n as number }
  }
  throw new Error(`${at}/value: {"value": …}, {"regex": "…"} or {"size": {"eq"|"gt"|"lt": n}} is expected`)
}

function stepAt(at: string, s: unknown, schema: string): RecoveryStep {
  const o = obj(s)
  if (!o) throw new Error(`${at}: an object is expected`)
  const path = pathAt(at, o.path)
  const match = o.match === undefined ? undefined : regexAt(`${at}/match`, o.match)
  switch (o.op) {
    case 'Replace':
      if (!('value' in o)) throw new Error(`${at}: Replace needs a value`)
      return { op: 'Replace', path, match, value: o.value }
    case 'Remove':
      return { op: 'Remove', path, match }
    case 'Cast':
      if (!CASTS.has(o.from as string) || !CASTS.has(o.to as string)) throw new Error(`${at}: Cast needs from and to among String, Numeric, Boolean, Array`)
      return { op: 'Cast', path, from: o.from as CastType, to: o.to as CastType }
    case 'Add':
      if (!schema.endsWith('/4-1-0')) throw new Error(`${at}: Add needs the recoveries schema 4-1-0`)
      if (!('value' in o)) throw new Error(`${at}: Add needs a value`)
      return { op: 'Add', path, value: o.value }
    default:
      throw new Error(`${at}/op: one of Replace, Remove, Cast${schema.endsWith('/4-1-0') ? ', Add' : ''} is expected, got ${JSON.stringify(o.op)}`)
  }
}

function keyOf(at: string, key: string): Omit<FlowKey, 'flows'> {
  const m = /^iglu:([^/]+)\/([^/]+)\/jsonschema\/([0-9]+|\*)-([0-9]+|\*)-([0-9]+|\*)$/.exec(key)
  if (!m) throw new Error(`${at}: a bad-row schema key iglu:vendor/name/jsonschema/M-R-A (parts may be *) is expected`)
  return { vendor: m[1]!, name: m[2]!, version: [m[3]!, m[4]!, m[5]!].map((p) => (p === '*' ? '*' : Number(p))) }
}

/** Checks a configuration document (parsed JSON) and compiles it. */
export function parseEventRecoveryConfig(doc: unknown): ConfigResult {
  const d = obj(doc)
  const schema = d?.schema
  if (typeof schema !== 'string' || !RECOVERIES_SCHEMA.test(schema)) {
    return { ok: false, errors: [`/schema: iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/ 2-0-0, 2-0-1, 3-0-0, 4-0-0 or 4-1-0 is expected, got ${JSON.stringify(schema)?.slice(0, 120)}`] }
  }
  const data = obj(d!.data)
  if (!data || Object.keys(data).length === 0) return { ok: false, errors: ['/data: an object of bad-row schema keys to flows is expected'] }
  const errors: string[] = []
  const keys: FlowKey[] = []
  for (const [key, flows] of Object.entries(data)) {
    const at = `/data/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`
    try {
      const k = keyOf(at, key)
      if (!Array.isArray(flows)) throw new Error(`${at}: a list of flows is expected`)
      const compiled: Flow[] = []
      flows.forEach((f, i) => {
        const fat = `${at}/${i}`
        try {
          const o = obj(f)
          if (!o || typeof o.name !== 'string' || !/^[a-zA-Z0-9-]+$/.test(o.name)) throw new Error(`${fat}/name: a slug (letters, digits, -) is expected`)
          if (!Array.isArray(o.conditions) || !Array.isArray(o.steps)) throw new Error(`${fat}: conditions and steps lists are expected`)
          const conditions = o.conditions.map((c, j) => {
            const cat = `${fat}/conditions/${j}`
            const co = obj(c)
            if (!co || co.op !== 'Test') throw new Error(`${cat}/op: "Test" is expected`)
            return { path: pathAt(cat, co.path), matcher: matcherAt(cat, co.value) }
          })
          const steps = o.steps.map((s, j) => stepAt(`${fat}/steps/${j}`, s, schema))
          compiled.push({ name: o.name, conditions, steps })
        } catch (err) {
          errors.push((err as Error).message)
        }
      })
      keys.push({ ...k, flows: compiled })
    } catch (err) {
      errors.push((err as Error).message)
    }
  }
  return errors.length > 0 ? { ok: false, errors: errors.slice(0, 20) } : { ok: true, value: { schema, keys } }
}

/** The flows whose key matches a bad row's schema URI, in the document's order. */
export function flowsFor(config: RecoveryConfig, rowSchema: string): Flow[] {
  const m = /^iglu:([^/]+)\/([^/]+)\/jsonschema\/([0-9]+)-([0-9]+)-([0-9]+)$/.exec(rowSchema)
  if (!m) return []
  const version = [m[3], m[4], m[5]].map(Number)
  return config.keys
    .filter((k) => k.vendor === m[1] && k.name === m[2] && k.version.every((p, i) => p === '*' || p === version[i]))
    .flatMap((k) => k.flows)
}
