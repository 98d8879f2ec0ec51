import { describe, expect, it } from 'vitest'
import { parseIgluUri } from '../../../lib/core/iglu/keys'
import { MemorySchemaStore } from '../../../lib/core/iglu/store'
import { compatibilityEntries, defaultChecker, preloadRefs, type CompatibilityChecker, type CompatOutcome } from '../../../lib/core/tracking-design/compat'

async function registry(entries: Record<string, object>) {
  const store = new MemorySchemaStore()
  for (const [uri, body] of Object.entries(entries)) {
    const k = parseIgluUri(uri)
    if (!k.ok) throw new Error(uri)
    await store.put({ key: k.value, body: body as Record<string, unknown>, isPublic: true, createdAt: '', updatedAt: '', supersedes: [] }, { create: true })
  }
  return store
}

/** A checker answering by the target's `description`. */
const stub = (answers: Record<string, CompatOutcome['result']>): CompatibilityChecker => ({
  check: (_a, b) => {
    const r = answers[(b as { description: string }).description]!
    return r === 'SchemaUndecidable' ? { result: r, reasons: [{ keyword: 'pattern', path: '#/properties/x', message: 'regex' }] } : { result: r } as CompatOutcome
  },
})

const doc = { id: 'S1', event: { source: 'iglu:com.acme/e/jsonschema/1-0-0', schema: { type: 'object' } } }

describe('compatibilityEntries: the documented compatibility table', () => {
  const both = () => registry({ 'iglu:com.acme/e/jsonschema/1-0-0': { description: 'current' }, 'iglu:com.acme/e/jsonschema/1-2-0': { description: 'latest' } })

  it.each([
    ['write', 'SchemaIncompatible', 'Compatible', [['Error', 'SchemaIncompatible', '1-0-0']]],
    ['write', 'Compatible', 'SchemaIncompatible', [['Warning', 'SchemaIncompatible', '1-2-0']]],
    ['write', 'SchemaIncompatible', 'SchemaIncompatible', [['Error', 'SchemaIncompatible', '1-0-0'], ['Warning', 'SchemaIncompatible', '1-2-0']]],
    ['read', 'SchemaIncompatible', 'SchemaIncompatible', [['Warning', 'SchemaIncompatible', '1-0-0'], ['Warning', 'SchemaIncompatible', '1-2-0']]],
    ['write', 'SchemaUndecidable', 'SchemaUndecidable', [['Warning', 'SchemaUndecidable', '1-0-0'], ['Warning', 'SchemaUndecidable', '1-2-0']]],
    ['read', 'Compatible', 'Compatible', []],
  ] as const)('%s, current %s, latest %s', async (op, current, latest, expected) => {
    const entries = await compatibilityEntries(doc, op, await both(), stub({ current, latest }))
    expect(entries.map((e) => [e.type, e.code, e.title.match(/version: (\S+?)(?:$| |;)/)![1]])).toEqual(expected)
    for (const e of entries) expect(e.source).toBe('event.schema')
  })

  it('titles name the specification id and the schema name, vendor and version', async () => {
    const [e] = await compatibilityEntries(doc, 'write', await both(), stub({ current: 'SchemaIncompatible', latest: 'Compatible' }))
    expect(e!.title).toBe('Event specification with id: S1, event schema is INCOMPATIBLE with schema with name: e, vendor: com.acme, version: 1-0-0')
  })

  it('checks once when the current version is the latest', async () => {
    const r = await registry({ 'iglu:com.acme/e/jsonschema/1-0-0': { description: 'current' } })
    expect(await compatibilityEntries(doc, 'read', r, stub({ current: 'SchemaIncompatible' }))).toHaveLength(1)
  })

  it('runs only when both event.source and event.schema are set', async () => {
    const checker: CompatibilityChecker = { check: () => { throw new Error('must not run') } }
    const r = await both()
    expect(await compatibilityEntries({ event: { source: doc.event.source } }, 'write', r, checker)).toEqual([])
    expect(await compatibilityEntries({ event: { schema: {} } }, 'write', r, checker)).toEqual([])
    expect(await compatibilityEntries({ event: null }, 'write', r, checker)).toEqual([])
  })
})

describe('the real checker behind the port', () => {
  it('resolves iglu $refs preloaded from the registry, transitively', async () => {
    const r = await registry({
      'iglu:com.acme/a/jsonschema/1-0-0': { type: 'object', properties: { x: { $ref: 'iglu:com.acme/b/jsonschema/1-0-0' } } },
      'iglu:com.acme/b/jsonschema/1-0-0': { $ref: 'iglu:com.acme/c/jsonschema/1-0-0#/definitions/n' },
      'iglu:com.acme/c/jsonschema/1-0-0': { definitions: { n: { type: 'integer', maximum: 5 } } },
    })
    const refs = await preloadRefs(r, [{ $ref: 'iglu:com.acme/a/jsonschema/1-0-0' }])
    expect([...refs.keys()].sort()).toEqual(['iglu:com.acme/a/jsonschema/1-0-0', 'iglu:com.acme/b/jsonschema/1-0-0', 'iglu:com.acme/c/jsonschema/1-0-0'])
    const spec = (max: number) => ({ id: 'S', event: { source: 'iglu:com.acme/a/jsonschema/1-0-0', schema: { type: 'object', properties: { x: { type: 'integer', minimum: 0, maximum: max } }, additionalProperties: false } } })
    expect(await compatibilityEntries(spec(3), 'write', r, defaultChecker)).toEqual([])
    expect((await compatibilityEntries(spec(9), 'write', r, defaultChecker)).map((e) => e.type)).toEqual(['Error'])
  })
})
