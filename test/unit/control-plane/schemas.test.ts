/**
 * GET /control-plane/schemas: every schema of the registry, public and
 * private, as the registry's `?repr=meta` listing writes them, for the
 * signed-in administrator (the control plane is behind basic authentication;
 * no API key is involved).
 */
import { describe, expect, it } from 'vitest'
import { controlPlaneApi, type ControlPlaneDeps } from '../../../lib/core/control-plane/api'
import { makeRegistry, request, schema, SUPER_KEY } from '../iglu/helpers'

async function setUp() {
  const registry = makeRegistry()
  for (const [name, isPublic] of [['checkout', true], ['audit', false]] as const) {
    const r = await registry.call('PUT', `/schemas/com.acme/${name}/jsonschema/1-0-0?isPublic=${isPublic}`, { apikey: SUPER_KEY, body: schema('com.acme', name, '1-0-0') })
    expect(r.status).toBe(201)
  }
  const deps = { version: '0.0.0', listSchemas: () => registry.schemas.listAll() } as unknown as ControlPlaneDeps
  return { registry, handle: controlPlaneApi(deps) }
}

describe('GET /control-plane/schemas', () => {
  it('lists the private schemas too, as the registry lists them to the super key', async () => {
    const { registry, handle } = await setUp()
    const res = await handle(request('GET', '/control-plane/schemas'))
    expect(res.statusCode).toBe(200)
    const listed = JSON.parse(String(res.body))
    // (in the registry's order: by publication time, which two schemas put in one millisecond share)
    expect(listed.map((s: { self: { name: string }; metadata: { isPublic: boolean } }) => [s.self.name, s.metadata.isPublic]).sort()).toEqual([['audit', false], ['checkout', true]])
    expect(listed).toEqual((await registry.call('GET', '/schemas?repr=meta', { apikey: SUPER_KEY })).body)
    // anonymous, the registry itself lists the public one only
    expect((await registry.call('GET', '/schemas?repr=meta')).body).toHaveLength(1)
  })
  it('answers GET only (405)', async () => {
    const { handle } = await setUp()
    const res = await handle(request('POST', '/control-plane/schemas'))
    expect(res.statusCode).toBe(405)
    expect(String(res.body)).toBe('Only GET is supported\n')
  })
})
