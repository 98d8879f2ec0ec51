/**
 * The specification store's list queries and the registry's batched reads against
 * DynamoDB Local: filters are answered by the declared indexes (a record without
 * index keys is seen by the partition query but by no index), updates move a
 * specification between index partitions, and a batched read returns every schema found.
 */
import { randomUUID } from 'node:crypto'
import { PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb'
import { describe, expect, it } from 'vitest'
import { DynamoSchemaStore } from '../../../lib/aws/registry-store'
import { backfillSpecIndexKeys, DynamoSpecStore } from '../../../lib/aws/tracking-design-store'
import { parseIgluUri, type SchemaKey } from '../../../lib/core/iglu/keys'
import { dataStructureHash } from '../../../lib/core/tracking-design/datastructures'
import type { HistoryEntry, JsonObject, StoredSpec } from '../../../lib/core/tracking-design/types'
import { testClients, useLocalStack } from '../../support/stack'
import { putSchema } from './helpers'

const stack = useLocalStack({ triggers: false })
const store = () => new DynamoSpecStore(testClients().ddb, stack.current.names.tables.eventSpecs, stack.current.names.tables.specHistory)
const ORG = 'org-queries'

function spec(doc: JsonObject, rev = 0): { spec: StoredSpec; entry: HistoryEntry } {
  const id = String(doc.id)
  const latest = { eventSpecId: id, version: Number(doc.version ?? 0), status: (doc.status ?? 'draft') as StoredSpec['latest']['status'], author: 'k', message: '', date: new Date().toISOString() }
  return { spec: { orgId: ORG, id, doc, rev, latest }, entry: { ...latest, snapshot: doc } }
}

const key = (uri: string): SchemaKey => {
  const k = parseIgluUri(uri)
  if (!k.ok) throw new Error(k.message)
  return k.value
}

describe('DynamoSpecStore.list', () => {
  const ids = { a: randomUUID(), b: randomUUID(), c: randomUUID() }
  const docs: Record<keyof typeof ids, JsonObject> = {
    a: { id: ids.a, name: 'a', status: 'draft', version: 0, dataProductId: 'dp-1', event: { source: 'iglu:com.acme/click/jsonschema/1-0-0' } },
    b: { id: ids.b, name: 'b', status: 'published', version: 1, event: { source: 'iglu:com.acme/click/jsonschema/1-0-1' } },
    c: { id: ids.c, name: 'c', status: 'draft', version: 0, dataProductId: 'dp-2' },
  }
  const hash = dataStructureHash(ORG, 'com.acme', 'click', 'jsonschema')
  const listed = async (filter?: Parameters<DynamoSpecStore['list']>[1]) => (await store().list(ORG, filter)).map((s) => s.doc.name).sort()

  it('answers each filter from its index, and everything from the partition', async () => {
    for (const d of Object.values(docs)) {
      const { spec: s, entry } = spec(d)
      expect(await store().create(s, entry)).toBe('ok')
    }
    // A record written without index keys (as by an older release): only the partition query sees it.
    const legacy = randomUUID()
    await testClients().ddb.send(new PutItemCommand({
      TableName: stack.current.names.tables.eventSpecs,
      Item: {
        pk: { S: `org#${ORG}` }, sk: { S: `spec#${legacy}` }, id: { S: legacy }, rev: { N: '0' }, status: { S: 'draft' },
        doc: { S: JSON.stringify({ id: legacy, name: 'legacy', status: 'draft', dataProductId: 'dp-1' }) },
        latest: { S: JSON.stringify({ eventSpecId: legacy, version: 0, status: 'draft', author: 'k', message: '', date: '2026-01-01T00:00:00Z' }) },
      },
    }))
    expect(await listed()).toEqual(['a', 'b', 'c', 'legacy'])
    expect(await listed({ status: 'draft' })).toEqual(['a', 'c'])
    expect(await listed({ status: 'published' })).toEqual(['b'])
    expect(await listed({ status: 'deprecated' })).toEqual([])
    expect(await listed({ dataProductId: 'dp-1' })).toEqual(['a'])
    expect(await listed({ dataStructures: [hash] })).toEqual(['a', 'b'])
    expect(await listed({ dataStructures: [hash], sourceVersion: '1-0-1' })).toEqual(['b'])
    expect(await listed({ dataStructures: [hash], sourceVersion: '1-0' })).toEqual([]) // a whole version, not a prefix
    expect(await listed({ dataStructures: [hash, hash, dataStructureHash(ORG, 'com.acme', 'nope', 'jsonschema')] })).toEqual(['a', 'b'])
    // the most selective index wins; the caller applies the rest of the predicate
    expect(await listed({ dataStructures: [hash], status: 'published' })).toEqual(['a', 'b'])
    // name claims never show in an index
    const claims = await testClients().ddb.send(new QueryCommand({
      TableName: stack.current.names.tables.eventSpecs, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :n)', ExpressionAttributeValues: { ':pk': { S: `org#${ORG}` }, ':n': { S: 'name#' } },
    }))
    expect(claims.Items?.length).toBe(2)
    for (const item of claims.Items ?? []) expect(Object.keys(item).filter((k) => k.startsWith('gsi'))).toEqual([])
  })

  it('moves a specification between index partitions on update, and out of them on delete', async () => {
    const previous = (await store().get(ORG, ids.a))!
    const doc = { ...docs.a, status: 'published', version: 1, dataProductId: 'dp-2', event: { source: 'iglu:com.acme/other/jsonschema/2-0-0' } }
    const { spec: next, entry } = spec(doc, previous.rev + 1)
    expect(await store().update(previous, next, entry, [])).toBe('ok')
    expect(await listed({ status: 'draft' })).toEqual(['c'])
    expect(await listed({ status: 'published' })).toEqual(['a', 'b'])
    expect(await listed({ dataProductId: 'dp-1' })).toEqual([])
    expect(await listed({ dataProductId: 'dp-2' })).toEqual(['a', 'c'])
    expect(await listed({ dataStructures: [hash] })).toEqual(['b'])
    expect(await listed({ dataStructures: [dataStructureHash(ORG, 'com.acme', 'other', 'jsonschema')], sourceVersion: '2-0-0' })).toEqual(['a'])
    expect(await store().delete(ORG, ids.a)).toBe(true)
    expect(await listed({ status: 'published' })).toEqual(['b'])
  })
})

describe('backfillSpecIndexKeys', () => {
  it('gives records written without index keys their keys once, and records that it did', async () => {
    const { eventSpecs, settings } = stack.current.names.tables
    const org = 'org-backfill'
    const id = randomUUID()
    await testClients().ddb.send(new PutItemCommand({
      TableName: eventSpecs,
      Item: {
        pk: { S: `org#${org}` }, sk: { S: `spec#${id}` }, id: { S: id }, rev: { N: '3' }, status: { S: 'published' },
        doc: { S: JSON.stringify({ id, name: 'old', status: 'published', dataProductId: 'dp-9', event: { source: 'iglu:com.acme/old/jsonschema/1-0-0' } }) },
        latest: { S: JSON.stringify({ eventSpecId: id, version: 1, status: 'published', author: 'k', message: '', date: '2026-01-01T00:00:00Z' }) },
      },
    }))
    const s = store()
    expect(await s.list(org, { status: 'published' })).toEqual([])
    expect(await backfillSpecIndexKeys(testClients().ddb, eventSpecs, settings)).toBeGreaterThanOrEqual(1)
    expect((await s.list(org, { status: 'published' })).map((x) => x.id)).toEqual([id])
    expect((await s.list(org, { dataProductId: 'dp-9' })).map((x) => x.id)).toEqual([id])
    expect((await s.list(org, { dataStructures: [dataStructureHash(org, 'com.acme', 'old', 'jsonschema')], sourceVersion: '1-0-0' })).map((x) => x.id)).toEqual([id])
    expect((await s.get(org, id))?.rev).toBe(3)
    // done once: later starts only read the record of it
    expect(await backfillSpecIndexKeys(testClients().ddb, eventSpecs, settings)).toBe(0)
  })
})

describe('DynamoSchemaStore.getMany', () => {
  it('reads many schemas in batches and leaves the missing ones out', async () => {
    const uris = Array.from({ length: 120 }, (_, i) => `iglu:com.batch/s${i}/jsonschema/1-0-0`)
    for (const uri of uris.slice(0, 110)) await putSchema(stack.current, uri, { type: 'object', description: uri })
    const registry = new DynamoSchemaStore(testClients().ddb, stack.current.names.tables.schemas)
    const found = await registry.getMany([...uris, uris[0]!].map(key))
    expect(found.size).toBe(110)
    expect(found.get(uris[7]!)?.body).toEqual({ type: 'object', description: uris[7] })
    expect(found.has(uris[115]!)).toBe(false)
    expect((await registry.getMany([])).size).toBe(0)
  })
})
