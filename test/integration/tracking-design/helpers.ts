import { DynamoSchemaStore } from '../../../lib/aws/registry-store'
import { DynamoAccountStore } from '../../../lib/aws/tracking-design-store'
import { createApiKey, createOrganization } from '../../../lib/core/tracking-design/accounts'
import { parseIgluUri } from '../../../lib/core/iglu/keys'
import { beforeAll } from 'vitest'
import type { LocalStack } from '../../../lib/local/stack'
import { testClients, useLocalStack } from '../../support/stack'

import { call } from '../../support/http'
export { call, type Reply } from '../../support/http'

export function accountStore(stack: LocalStack) {
  return new DynamoAccountStore(testClients().ddb, stack.names.tables.apiKeys, stack.names.tables.settings)
}

/** A new organization with one API key, and a client holding a token for it. */
export async function newTenant(stack: LocalStack, name = 'acme') {
  const store = accountStore(stack)
  const org = await createOrganization(store, name, new Date())
  if (!org.ok) throw new Error(org.message)
  const key = await createApiKey(store, org.value.id, new Date())
  if (!key.ok) throw new Error(key.message)
  const orgId = org.value.id
  const base = `${stack.url}/api/msc/v1/organizations/${orgId}`
  const tok = await call(`${base}/credentials/v3/token`, 'GET', { headers: { 'X-API-Key-ID': key.value.keyId, 'X-API-Key': key.value.secret } })
  if (tok.status !== 200) throw new Error(`token: ${tok.status} ${tok.text}`)
  const token: string = tok.body.accessToken
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(`${base}${path}`, method, { headers: { authorization: `Bearer ${token}`, ...headers }, body })
  return { orgId, keyId: key.value.keyId, secret: key.value.secret, base, token, api }
}

export type Tenant = Awaited<ReturnType<typeof newTenant>>

/**
 * For a test file: a local stack (no stream triggers) whose registry holds
 * `schemas` (URI → schema, written in this order), and a tenant on it, made
 * before the file's tests. The tenant's members can be read once they run.
 */
export function useTenant(schemas: Record<string, Record<string, unknown>> = {}): { stack: ReturnType<typeof useLocalStack>; t: Tenant } {
  const stack = useLocalStack({ triggers: false })
  let made: Tenant | undefined
  beforeAll(async () => {
    for (const [uri, body] of Object.entries(schemas)) await putSchema(stack.current, uri, body)
    made = await newTenant(stack.current)
  })
  const ready = (): Tenant => {
    if (made === undefined) throw new Error('the tenant is made before the tests: use it inside them')
    return made
  }
  const t = { api: (...args: Parameters<Tenant['api']>) => ready().api(...args) } as Tenant
  for (const k of ['orgId', 'keyId', 'secret', 'base', 'token'] as const) Object.defineProperty(t, k, { get: () => ready()[k] })
  return { stack, t }
}

export const META = 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#'

/** Writes a schema straight into this stack's registry table. */
export async function putSchema(stack: LocalStack, uri: string, body: Record<string, unknown>) {
  const k = parseIgluUri(uri)
  if (!k.ok) throw new Error(k.message)
  const now = new Date().toISOString()
  await new DynamoSchemaStore(testClients().ddb, stack.names.tables.schemas).put(
    { key: k.value, body, isPublic: true, createdAt: now, updatedAt: now, supersedes: [] },
    { create: false },
  )
}

export const objectSchema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  additionalProperties: false,
  ...extra,
})
