/**
 * Recovery steps: a small declarative document (validated against
 * `schemas/io.floe/recovery_steps/jsonschema/1-0-0`) of changes applied, in
 * order, to a failed event's tracker parameters before it is replayed:
 * replace or remove a value (a whole parameter, or by JSON path inside a
 * JSON parameter, optionally only when it matches a regular expression),
 * cast a value to another JSON type, rename a schema version in the
 * self-describing event (`ue_pr`/`ue_px`) and contexts (`co`/`cx`). Base64
 * parameters are decoded, changed and encoded again.
 */
import type { ValidateFunction } from 'ajv'
import { compileSelfDescribing, readSchema } from '../collector/config'
import { linearRegExp, type LinearRegExp } from '../iglu/regex-engine'
import { base64Text } from '../enrich/convert'
import type { RecoveryConfig } from './event-recovery/config'

export const RECOVERY_STEPS_SCHEMA_KEY = 'io.floe/recovery_steps/jsonschema/1-0-0'
/** Largest steps document accepted, in bytes. */
export const MAX_STEPS_BYTES = 64 * 1024

type Segment = { readonly key: string } | { readonly index: number } | { readonly all: true }

export type Step =
  | { readonly op: 'replace'; readonly field: string; readonly path?: readonly Segment[]; readonly match?: LinearRegExp; readonly value: unknown }
  | { readonly op: 'remove'; readonly field: string; readonly path?: readonly Segment[]; readonly match?: LinearRegExp }
  | { readonly op: 'cast'; readonly field: string; readonly path: readonly Segment[]; readonly to: 'string' | 'number' | 'integer' | 'boolean' }
  | { readonly op: 'renameSchema'; readonly from: string; readonly to: string }

export interface RecoverySteps {
  readonly name: string | null
  readonly steps: readonly Step[]
  /** A snowplow-event-recovery configuration instead of steps: it decides per bad row (see event-recovery/apply.ts). */
  readonly eventRecovery?: RecoveryConfig
}

export type StepsResult = { readonly ok: true; readonly value: RecoverySteps } | { readonly ok: false; readonly errors: readonly string[] }

export const NO_STEPS: RecoverySteps = { name: null, steps: [] }

let validator: ValidateFunction | undefined

/** Parses a JSON path (`$`, `.name`, `['name']`, `[n]`, `[*]`); throws with the reason. */
export function parsePath(path: string): Segment[] {
  if (!path.startsWith('$')) throw new Error(`a path starts with $ (got '${path.slice(0, 40)}')`)
  const out: Segment[] = []
  let i = 1
  while (i < path.length) {
    const c = path[i]
    if (c === '.') {
      const m = /^[A-Za-z0-9_$@-]+/.exec(path.slice(i + 1))
      if (!m) throw new Error(`a name is expected after '.' at ${i} of '${path}'`)
      out.push({ key: m[0] })
      i += 1 + m[0].length
    } else if (c === '[') {
      const rest = path.slice(i)
      const m = /^\[(?:(\*)|(0|[1-9][0-9]{0,8})|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]/.exec(rest)
      if (!m) throw new Error(`[*], [index] or ['name'] is expected at ${i} of '${path}'`)
      if (m[1]) out.push({ all: true })
      else if (m[2] !== undefined) out.push({ index: Number(m[2]) })
      else out.push({ key: (m[3] ?? m[4]!).replace(/\\(.)/g, '$1') })
      i += m[0].length
    } else throw new Error(`unexpected '${c}' at ${i} of '${path}'`)
  }
  return out
}

/** Checks a steps document (parsed JSON) against its schema and the rules a schema cannot say. */
export function parseSteps(doc: unknown): StepsResult {
  validator ??= compileSelfDescribing(readSchema(RECOVERY_STEPS_SCHEMA_KEY))
  if (!validator(doc)) {
    const errors = (validator.errors ?? []).map((e) => `${e.instancePath || '(root)'}: ${e.message ?? e.keyword}`)
    return { ok: false, errors: [...new Set(errors)].slice(0, 20) }
  }
  const d = doc as { name?: string; steps: Record<string, unknown>[] }
  const errors: string[] = []
  const steps: Step[] = []
  d.steps.forEach((s, i) => {
    const at = `/steps/${i}`
    try {
      const path = typeof s.path === 'string' ? parsePath(s.path) : undefined
      let match: LinearRegExp | undefined
      if (typeof s.match === 'string') {
        try {
          match = linearRegExp(s.match)
        } catch (err) {
          throw new Error(`match: ${(err as Error).message}`)
        }
      }
      const field = s.field as string
      switch (s.op) {
        case 'replace':
          steps.push({ op: 'replace', field, path, match, value: s.value })
          if (path === undefined && typeof s.value !== 'string') throw new Error('replacing a whole parameter needs a string value')
          break
        case 'remove':
          steps.push({ op: 'remove', field, path, match })
          break
        case 'cast':
          if (path!.length === 0) throw new Error('cast needs a path inside the JSON parameter')
          steps.push({ op: 'cast', field, path: path!, to: s.to as 'string' })
          break
        case 'renameSchema':
          steps.push({ op: 'renameSchema', from: s.from as string, to: s.to as string })
          break
      }
    } catch (err) {
      errors.push(`${at}: ${(err as Error).message}`)
    }
  })
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { name: d.name ?? null, steps } }
}

/** Parses a steps document from its text (a size limit, then JSON, then the schema). */
export function parseStepsText(text: string): StepsResult {
  if (Buffer.byteLength(text) > MAX_STEPS_BYTES) return { ok: false, errors: [`the steps document is larger than ${MAX_STEPS_BYTES} bytes`] }
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    return { ok: false, errors: [`the steps document is not JSON: ${(err as Error).message}`] }
  }
  return parseSteps(doc)
}

// ---------------------------------------------------------------------------
// Applying

export type Params = Map<string, string | null>

/** The parameters of a JSON field, plain and base64: `ue_pr`/`ue_px`, `co`/`cx`. */
const JSON_FIELDS: Readonly<Record<string, readonly [plain: string, base64: string]>> = {
  ue_pr: ['ue_pr', 'ue_px'],
  ue_px: ['ue_pr', 'ue_px'],
  co: ['co', 'cx'],
  cx: ['co', 'cx'],
}

class Broken extends Error {}

/** The JSON value of a field, and how to put a changed one back; undefined when the event has no such parameter. */
function jsonField(params: Params, field: string): { value: unknown; put: (v: unknown) => void } | undefined {
  const pair = JSON_FIELDS[field]
  const names = pair ?? [field, undefined]
  for (const name of names) {
    if (name === undefined) continue
    const raw = params.get(name)
    if (raw === undefined || raw === null) continue
    const base64 = pair !== undefined && name === pair[1]
    const text = base64 ? base64Text(raw) : raw
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      throw new Broken(`parameter ${name} is not JSON${base64 ? ' once decoded from base64' : ''}: ${(err as Error).message}`)
    }
    const put = (v: unknown) => {
      const s = JSON.stringify(v)
      params.set(name, base64 ? Buffer.from(s, 'utf8').toString('base64url') : s)
    }
    return { value, put }
  }
  return undefined
}

type Slot = { get: () => unknown; set: (v: unknown) => void; remove: () => void }

/** The places `path` finds under `root` (a holder so that the root itself can be replaced). */
function slots(holder: { v: unknown }, path: readonly Segment[]): Slot[] {
  let current: Slot[] = [{ get: () => holder.v, set: (v) => (holder.v = v), remove: () => (holder.v = undefined) }]
  for (const seg of path) {
    const next: Slot[] = []
    for (const s of current) {
      const v = s.get()
      if ('key' in seg) {
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, seg.key)) {
          const o = v as Record<string, unknown>
          next.push({ get: () => o[seg.key], set: (x) => (o[seg.key] = x), remove: () => delete o[seg.key] })
        }
      } else if (Array.isArray(v)) {
        const indexes = 'all' in seg ? v.map((_, i) => i) : seg.index < v.length ? [seg.index] : []
        for (const i of indexes) next.push({ get: () => v[i], set: (x) => (v[i] = x), remove: () => v.splice(i, 1) })
      }
    }
    current = next
  }
  return current
}

const textOf = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '')

function cast(v: unknown, to: 'string' | 'number' | 'integer' | 'boolean'): unknown {
  switch (to) {
    case 'string':
      return typeof v === 'string' ? v : textOf(v)
    case 'number':
    case 'integer': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : typeof v === 'boolean' ? Number(v) : Number.NaN
      if (!Number.isFinite(n) || (to === 'integer' && !Number.isInteger(n))) throw new Broken(`cannot cast ${textOf(v).slice(0, 100)} to ${to}`)
      return n
    }
    case 'boolean':
      if (typeof v === 'boolean') return v
      if (v === 'true' || v === 1 || v === '1') return true
      if (v === 'false' || v === 0 || v === '0') return false
      throw new Broken(`cannot cast ${textOf(v).slice(0, 100)} to boolean`)
  }
}

/** Renames `from`'s version to `to` in every self-describing object of `v` (recursively); true when one was renamed. */
function renameIn(v: unknown, from: string, to: string): boolean {
  if (Array.isArray(v)) return v.map((x) => renameIn(x, from, to)).some(Boolean)
  if (v === null || typeof v !== 'object') return false
  const o = v as Record<string, unknown>
  let changed = false
  if (o.schema === from) {
    o.schema = from.replace(/[0-9]+-[0-9]+-[0-9]+$/, to)
    changed = true
  }
  for (const k of Object.keys(o)) if (k !== 'schema' && renameIn(o[k], from, to)) changed = true
  return changed
}

function applyStep(params: Params, step: Step): void {
  if (step.op === 'renameSchema') {
    for (const field of ['ue_pr', 'co']) {
      const f = jsonField(params, field)
      if (f && renameIn(f.value, step.from, step.to)) f.put(f.value)
    }
    return
  }
  if (step.op !== 'cast' && step.path === undefined) {
    // the whole parameter, as text
    const current = params.get(step.field)
    if (current === undefined) return
    if (step.match && !step.match.test(current ?? '')) return
    if (step.op === 'remove') params.delete(step.field)
    else params.set(step.field, step.value as string)
    return
  }
  const f = jsonField(params, step.field)
  if (!f) return
  const holder = { v: f.value }
  for (const s of slots(holder, step.path!)) {
    const v = s.get()
    if (step.op === 'cast') s.set(cast(v, step.to))
    else if (step.match && !step.match.test(textOf(v))) continue
    else if (step.op === 'remove') s.remove()
    else s.set(structuredClone(step.value))
  }
  // removing the root removes the parameter
  if (holder.v === undefined) {
    for (const name of JSON_FIELDS[step.field] ?? [step.field]) params.delete(name)
  } else f.put(holder.v)
}

/** Applies the steps to a copy of the parameters; the copy, or why the steps broke the event. */
export function applySteps(params: ReadonlyMap<string, string | null>, steps: RecoverySteps): { ok: true; params: Params } | { ok: false; error: string } {
  const out: Params = new Map(params)
  try {
    steps.steps.forEach((s, i) => {
      try {
        applyStep(out, s)
      } catch (err) {
        throw new Broken(`step ${i} (${s.op}): ${(err as Error).message}`)
      }
    })
  } catch (err) {
    if (err instanceof Broken) return { ok: false, error: err.message }
    throw err
  }
  return { ok: true, params: out }
}
