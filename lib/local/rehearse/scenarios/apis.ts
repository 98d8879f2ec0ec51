/**
 * The tracking-design API (organization, API key, token, a specification
 * created, published and fetched) and the schema registry (keygen, push,
 * read with keys) through the rehearsal's HTTP API, as their clients call them.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { DynamoAccountStore } from '../../../aws/tracking-design-store'
import { createApiKey, createOrganization } from '../../../core/tracking-design/accounts'
import { STORED_AS_IS } from '../../../core/secrets-at-rest'
import { call, check, expectStatus, ScenarioFailure, type ScenarioContext } from './target'

/** A schema of the rehearsal's own vendor, private, pushed with a write key. */
export function rehearsalSchema(vendor: string, name: string): Record<string, unknown> {
  return {
    $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
    description: 'An event of the deployment rehearsal',
    self: { vendor, name, format: 'jsonschema', version: '1-0-0' },
    type: 'object',
    properties: { step: { type: 'string', maxLength: 64 } },
    required: ['step'],
    additionalProperties: false,
  }
}

export async function trackingDesignScenario(ctx: ScenarioContext): Promise<string> {
  // the organization and its API key, as `floe org create` / `floe apikey create --stack` make them
  const store = new DynamoAccountStore(ctx.target.clients.ddb, ctx.names.tables.apiKeys, ctx.names.tables.settings, STORED_AS_IS)
  const org = await createOrganization(store, `Rehearsal ${randomBytes(3).toString('hex')}`, new Date())
  if (!org.ok) throw new ScenarioFailure(`organization: ${org.message}`)
  const key = await createApiKey(store, org.value.id, new Date())
  if (!key.ok) throw new ScenarioFailure(`API key: ${key.message}`)
  const base = ctx.url(`/api/msc/v1/organizations/${org.value.id}`)
  const token = await call(`${base}/credentials/v3/token`, { headers: { 'X-API-Key-ID': key.value.keyId, 'X-API-Key': key.value.secret } })
  expectStatus(token, 200, 'GET /credentials/v3/token')
  const accessToken = token.json<{ accessToken?: string }>().accessToken
  check(typeof accessToken === 'string' && accessToken.split('.').length === 3, `the token answer has no JWT: ${token.text.slice(0, 200)}`)
  const auth = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }
  const unauth = await call(`${base}/event-specs/v1`)
  expectStatus(unauth, 401, 'GET /event-specs/v1 without a token')

  const id = randomUUID()
  const spec = { id, name: 'Rehearsal link click', event: { source: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1' } }
  const created = await call(`${base}/event-specs/v1`, { method: 'POST', headers: auth, body: JSON.stringify({ spec, message: 'rehearsal draft' }) })
  expectStatus(created, 201, 'POST /event-specs/v1')
  check(created.json<{ data: { status?: string }[] }>().data[0]?.status === 'draft', `created, not a draft: ${created.text.slice(0, 300)}`)
  const published = await call(`${base}/event-specs/v1/publish`, { method: 'POST', headers: auth, body: JSON.stringify({ eventSpecIds: [id], message: 'rehearsal release' }) })
  expectStatus(published, 202, 'POST /event-specs/v1/publish')
  const fetched = await call(`${base}/event-specs/v1/${id}`, { headers: auth })
  expectStatus(fetched, 200, `GET /event-specs/v1/${id}`)
  const got = fetched.json<{ data: { id: string; status: string; version: number; name: string }[] }>().data[0]
  check(got?.id === id && got.status === 'published' && got.name === spec.name, `fetched: ${fetched.text.slice(0, 300)}`)
  const listed = await call(`${base}/event-specs/v1?status=published`, { headers: auth })
  expectStatus(listed, 200, 'GET /event-specs/v1?status=published')
  check(listed.json<{ data: { id: string }[] }>().data.some((s) => s.id === id), `the published list lacks ${id}: ${listed.text.slice(0, 300)}`)
  return `organization, API key, token; specification ${id} created (draft), published (version ${got.version}) and fetched`
}

export async function registryScenario(ctx: ScenarioContext): Promise<string> {
  const api = ctx.url('/registry-server/api')
  const superKey = await ctx.superKey()
  const vendor = `com.rehearsal${randomBytes(3).toString('hex')}`
  const keygen = await call(`${api}/auth/keygen`, { method: 'POST', headers: { apikey: superKey, 'content-type': 'application/json' }, body: JSON.stringify({ vendorPrefix: vendor }) })
  expectStatus(keygen, 200, 'POST /registry-server/api/auth/keygen')
  const keys = keygen.json<{ read?: string; write?: string }>()
  check(keys.read && keys.write, `keygen answered no read and write keys: ${keygen.text.slice(0, 200)}`)
  const path = `${api}/schemas/${vendor}/checkout_step/jsonschema/1-0-0`
  const pushed = await call(`${path}?isPublic=false`, { method: 'PUT', headers: { apikey: keys.write!, 'content-type': 'application/json' }, body: JSON.stringify(rehearsalSchema(vendor, 'checkout_step')) })
  expectStatus(pushed, 201, `PUT ${path.slice(api.length)} with the write key`)
  const refused = await call(`${api}/schemas/${vendor}/other/jsonschema/1-0-0`, { method: 'PUT', headers: { apikey: keys.read!, 'content-type': 'application/json' }, body: JSON.stringify(rehearsalSchema(vendor, 'other')) })
  check(refused.status === 401 || refused.status === 403, `a push with the read key: ${refused.status} (expected 401 or 403) ${refused.text.slice(0, 200)}`)
  const read = await call(path, { headers: { apikey: keys.read! } })
  expectStatus(read, 200, `GET ${path.slice(api.length)} with the read key`)
  check((read.json<{ self?: { vendor?: string } }>().self?.vendor) === vendor, `read back: ${read.text.slice(0, 200)}`)
  const anonymous = await call(path)
  expectStatus(anonymous, 404, `GET ${path.slice(api.length)} without a key (a private schema)`)
  return `keygen for ${vendor}; a private schema pushed with the write key (the read key refused), read with the read key, hidden without one`
}
