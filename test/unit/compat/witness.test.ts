/**
 * Witness confirmation judges a witness against the parts of A and B that can apply to it: on a
 * sample of Iglu Central's schemas and instances near its witnesses, ajv answers the same for the part as for
 * the whole schema; an inherited name (`constructor`) is kept as ajv reads it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkCompatibility } from '../../../lib/core/compat/index'
import { confirmWhole, relevantRoot } from '../../../lib/core/compat/validator'
import { igluCentral } from '../../support/iglu-central'
import { makeAjv } from './helpers'

const ajv = makeAjv()
const whole = new WeakMap<object, ((v: unknown) => boolean) | null>()
/** ajv's answer, or undefined when the schema cannot be compiled here (references to other schemas). */
const judge = (schema: object, value: unknown): boolean | undefined => {
  let v = whole.get(schema)
  if (v === undefined) {
    const s = { ...(schema as Record<string, unknown>) }
    delete s.$schema
    delete s.self
    try {
      const f = ajv.compile(s)
      v = (x: unknown) => f(x) === true
    } catch {
      v = null
    }
    ajv.removeSchema(s)
    whole.set(schema, v)
  }
  return v === null ? undefined : v(value)
}

/** Instances near a witness: each member removed, each value replaced by values of other types. */
function near(w: unknown): unknown[] {
  const out: unknown[] = [w, null, 1, 'x', [], {}]
  if (w !== null && typeof w === 'object' && !Array.isArray(w)) {
    for (const k of Object.keys(w)) {
      const { [k]: _, ...rest } = w as Record<string, unknown>
      out.push(rest)
      for (const v of [null, 0, 1.5, '', 'text', [], {}, [1, 'a'], { a: 1 }]) out.push({ ...(w as object), [k]: v })
    }
    out.push({ ...(w as object), extra: 'x' })
  }
  if (Array.isArray(w)) out.push([...w, 1], w.slice(1), [w])
  return out
}

describe('witness confirmation on the parts that apply', () => {
  it('gives ajv the same answer as the whole schema, on Iglu Central schemas and instances near their witnesses', () => {
    const dir = join(igluCentral, 'schemas')
    const schemas: object[] = []
    for (const vendor of readdirSync(dir)) {
      for (const name of readdirSync(join(dir, vendor))) {
        const d = join(dir, vendor, name, 'jsonschema')
        if (!existsSync(d)) continue
        for (const v of readdirSync(d).sort()) schemas.push(JSON.parse(readFileSync(join(d, v), 'utf8')) as object)
      }
    }
    expect(schemas.length).toBeGreaterThan(100)
    let compared = 0
    // every 12th schema (the whole corpus takes minutes: each schema is compiled by ajv for each instance's part)
    for (let i = 0; i < schemas.length; i += 12) {
      const a = schemas[i]!
      // a witness from the schema against a stricter version of itself (one more required name)
      const b = { ...(a as Record<string, unknown>), required: [...(((a as Record<string, unknown>).required as string[] | undefined) ?? []), 'zz_required'], properties: { ...(((a as Record<string, unknown>).properties as object | undefined) ?? {}) } }
      const r = checkCompatibility(a, b)
      const w = r.result === 'SchemaIncompatible' ? r.witness : {}
      for (const x of near(w)) {
        for (const s of [a, b]) {
          const part = relevantRoot(s, x)
          if (part === undefined || judge(s, x) === undefined) continue
          expect(judge(part, x), `${JSON.stringify(x).slice(0, 200)} on ${JSON.stringify(s).slice(0, 200)}`).toBe(judge(s, x))
          compared++
        }
      }
    }
    expect(compared).toBeGreaterThan(500)
  })

  it('keeps a property ajv reads from the prototype, drops those of absent names and other types', () => {
    const s = { type: 'object', properties: { constructor: { type: 'string' }, a: { type: 'string', maxLength: 2 }, gone: { type: 'number' } }, additionalProperties: false, definitions: { x: { type: 'string' } } }
    const part = relevantRoot(s, { a: 'ab' }) as Record<string, any>
    expect(Object.keys(part.properties)).toEqual(['constructor', 'a'])
    expect(part.definitions).toBeUndefined()
    expect(judge(part, { a: 'ab' })).toBe(judge(s, { a: 'ab' }))
    expect(relevantRoot({ properties: { a: { $ref: '#/properties/b' } } }, { a: 1 })).toBeUndefined()
    expect(relevantRoot({ properties: { a: { id: 'x', type: 'string' } } }, { a: 1 })).toBeUndefined()
    expect(confirmWhole({ type: 'string' }, { type: 'string', maxLength: 1 }, 'ab')).toBe(true)
  })
})
