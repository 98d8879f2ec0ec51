/**
 * The registry's change counter in the settings table (DynamoDB Local), as a
 * function on AWS follows it: a write counted by another process is seen by
 * this process's resolvers at its first check `REGISTRY_CHECK_MS` or more
 * after its last read, and not before (the bound docs/registry.md gives).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { parseIgluUri, type SchemaKey } from '../../../lib/core/iglu/keys'
import { StoreRepository } from '../../../lib/core/iglu/repositories'
import { Resolver } from '../../../lib/core/iglu/resolver'
import { OWN_REGISTRY } from '../../../lib/core/iglu/resolver-config'
import type { JsonObject } from '../../../lib/core/iglu/selfdesc'
import { MemorySchemaStore } from '../../../lib/core/iglu/store'
import { envVar } from '../../../lib/infra/resources'
import { bumpRegistryChanges, checkRegistryChanges, followRegistry, readRegistryChanges, REGISTRY_CHECK_MS, resetRegistryChanges } from '../../../lib/runtime/registry-changes'
import { testClients, useLocalStack } from '../../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })
afterAll(() => resetRegistryChanges())

const X = 'iglu:com.acme/changes/jsonschema/1-0-0'
const key = (parseIgluUri(X) as { ok: true; value: SchemaKey }).value

describe("the registry's change counter", () => {
  it('a write counted elsewhere is seen at the first check REGISTRY_CHECK_MS after the last read', async () => {
    resetRegistryChanges()
    const ddb = testClients().ddb
    const table = stack.current.names.tables.settings
    const env = { [envVar('table', 'settings')]: table }
    const store = new MemorySchemaStore()
    const resolver = followRegistry(new Resolver({ repositories: [new StoreRepository(store, { name: OWN_REGISTRY })] }))
    const t0 = 1_000_000
    await checkRegistryChanges(() => ddb, env, t0)
    expect((await resolver.lookupSchema(X)).ok).toBe(false)

    // Another process (the registry function) writes the schema and counts the write.
    await store.put({ key, body: { type: 'object' } as JsonObject, isPublic: true, createdAt: 't', updatedAt: 't', supersedes: [] }, { create: true })
    const before = await readRegistryChanges(ddb, table)
    expect(await bumpRegistryChanges(ddb, table)).toBe(before + 1)

    await checkRegistryChanges(() => ddb, env, t0 + REGISTRY_CHECK_MS - 1)
    expect((await resolver.lookupSchema(X)).ok).toBe(false)
    await checkRegistryChanges(() => ddb, env, t0 + REGISTRY_CHECK_MS)
    expect(await resolver.lookupSchema(X)).toMatchObject({ ok: true, repository: OWN_REGISTRY })
  }, 120_000)
})
