import { describe, expect, it } from 'vitest'
import { nameClaim, readBody, validateSpec, type NameClaim, type ValidationContext } from '../../../lib/core/tracking-design/validate'
import type { HistoryEntry, StoredSpec } from '../../../lib/core/tracking-design/types'

const EXISTING = new Set(['iglu:com.acme/e/jsonschema/1-0-0', 'iglu:com.acme/u/jsonschema/1-0-0'])
const ctx = (over: Partial<ValidationContext> = {}): ValidationContext => ({
  mode: 'create',
  nameOwner: async () => undefined,
  schemaExists: async (k) => EXISTING.has(`iglu:${k.vendor}/${k.name}/${k.format}/${k.version.model}-${k.version.revision}-${k.version.addition}`),
  dataProductExists: async (id) => id === 'dp1',
  ...over,
})
const sources = async (spec: Record<string, unknown>, c = ctx()) => (await validateSpec(spec, c)).errors.map((e) => `${e.code}@${e.source}`)
const other = (id: string, name: string, source?: string): StoredSpec => ({ orgId: 'o', id, rev: 1, doc: { id, name, ...(source ? { event: { source } } : {}) }, latest: { eventSpecId: id, version: 0, status: 'draft', author: '', message: '', date: '' } })
const hist = (version: number, status: 'draft' | 'published'): HistoryEntry => ({ eventSpecId: 'x', version, status, author: '', message: '', date: '', snapshot: {} })

describe('readBody', () => {
  it('takes spec (or scenario) and an optional message', () => {
    expect(readBody({ spec: { name: 'a' }, message: 'hi' })).toEqual({ ok: true, spec: { name: 'a' }, message: 'hi' })
    expect(readBody({ scenario: { name: 'a' } })).toEqual({ ok: true, spec: { name: 'a' }, message: '' })
    expect(readBody({ spec: { name: 'a' }, message: null })).toMatchObject({ ok: true, message: '' })
    expect(readBody({ spec: 'a' })).toMatchObject({ ok: false })
    expect(readBody({ spec: {}, message: 3 })).toMatchObject({ ok: false })
    expect(readBody(null)).toMatchObject({ ok: false })
  })
})

describe('validateSpec', () => {
  it('accepts a minimal spec and the snowplow-cli shape', async () => {
    expect(await sources({ name: 'a' })).toEqual([])
    expect(await sources({ name: 'a', status: '', version: 0, event: null, entities: { tracked: [{ source: 'iglu:com.acme/u/jsonschema/1-0-0', minCardinality: 0, maxCardinality: null }], enriched: null }, dataProductId: '', lockStatus: 'locked' })).toEqual([])
  })
  it('reports each rule at its field', async () => {
    expect(await sources({ name: 'a', version: -1, status: 'x' })).toEqual(['InvalidValue@spec.status', 'InvalidValue@spec.version'])
    expect(await sources({ name: 'a', event: { source: 'iglu:com.acme/zz/jsonschema/1-0-0' } })).toEqual(['SchemaNotFound@spec.event.source'])
    expect(await sources({ name: 'a', event: { source: 'iglu:com.acme/e/jsonschema/1-0' } })).toEqual(['InvalidIgluUri@spec.event.source'])
    expect(await sources({ name: 'a', dataProductId: 'nope' })).toEqual(['DataProductNotFound@spec.dataProductId'])
    expect(await sources({ name: 'a', entities: { tracked: [{ source: 'iglu:com.acme/u/jsonschema/1-0-0' }, { source: 'iglu:com.acme/u/jsonschema/1-0-0' }] } })).toEqual(['DuplicateEntity@spec.entities.tracked[1].source'])
    expect(await sources({ name: 'a', entities: { tracked: [{ source: 'iglu:com.acme/u/jsonschema/1-0-0', minCardinality: 2, maxCardinality: 1 }] } })).toEqual(['InvalidValue@spec.entities.tracked[0].maxCardinality'])
  })
  it('names are unique per data structure (vendor/name/format), excluding the specification itself', async () => {
    const others = [other('s1', 'dup', 'iglu:com.acme/e/jsonschema/1-0-0')]
    const nameOwner = async (c: NameClaim) => others.find((o) => nameClaim(o.doc)?.group === c.group && o.doc.name === c.name)?.id
    expect(await sources({ name: 'dup', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } }, ctx({ nameOwner }))).toEqual(['NameNotUnique@spec.name'])
    expect(await sources({ name: 'dup', event: { source: 'iglu:com.acme/e/jsonschema/2-0-0' } }, ctx({ nameOwner, schemaExists: async () => true }))).toEqual(['NameNotUnique@spec.name'])
    expect(await sources({ name: 'dup', event: { source: 'iglu:com.acme/u/jsonschema/1-0-0' } }, ctx({ nameOwner }))).toEqual([])
    expect(await sources({ name: 'dup' }, ctx({ nameOwner }))).toEqual([])
    expect(await sources({ name: 'dup', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0' } }, ctx({ nameOwner, mode: 'edit', pathId: 's1' }))).toEqual([])
  })
  it('edit: the version must be new and above the last published one', async () => {
    const c = ctx({ mode: 'edit', pathId: 'x', history: [hist(1, 'published'), hist(2, 'draft'), hist(4, 'published'), hist(6, 'draft')] })
    expect(await sources({ name: 'a', version: 6 }, c)).toEqual(['VersionExists@spec.version'])
    expect(await sources({ name: 'a', version: 3 }, c)).toEqual(['VersionNotAfterPublished@spec.version'])
    expect(await sources({ name: 'a', version: 2 }, c)).toEqual(['VersionExists@spec.version', 'VersionNotAfterPublished@spec.version'])
    expect(await sources({ name: 'a', version: 5 }, c)).toEqual([])
  })
})
