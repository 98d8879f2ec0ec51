/**
 * Schema files under `FLOE_IGLU_DIRS` without a restart, in the running
 * stack: an event whose schema is in no repository fails; the schema file
 * written under the directory, the next event is good (enrich's worker
 * thread, `/micro/validate`) and `/micro/iglu` serves it; a changed file is
 * picked up the same way; a file that cannot be used is logged with its path
 * and reason, and the others are still used.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildSelfDescribingEvent } from '@snowplow/node-tracker'
import { afterAll, describe, expect, it } from 'vitest'
import { captureRequests, type TrackerRequest } from '../../support/tracker-requests'
import { useLocalStack, withAuth } from '../../support/stack'

const dir = mkdtempSync(join(tmpdir(), 'floe-iglu-dirs-'))
const startLog: string[] = []
// a file that cannot be used, there from the start: said in the start log
mkdirSync(join(dir, 'com.acme.reload/broken/jsonschema'), { recursive: true })
writeFileSync(join(dir, 'com.acme.reload/broken/jsonschema/1-0-0'), '{"self": ')
const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_IGLU_DIRS: dir }, log: (l) => startLog.push(l) })
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const THING = 'iglu:com.acme.reload/thing/jsonschema/1-0-0'
const schema = (properties: Record<string, unknown>, required: string[] = []) => ({
  $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
  self: { vendor: 'com.acme.reload', name: 'thing', format: 'jsonschema', version: '1-0-0' },
  type: 'object',
  properties,
  required,
  additionalProperties: false,
})
const writeSchema = (doc: unknown) => {
  mkdirSync(join(dir, 'com.acme.reload/thing/jsonschema'), { recursive: true })
  writeFileSync(join(dir, 'com.acme.reload/thing/jsonschema/1-0-0'), JSON.stringify(doc))
}

const settle = async () => {
  await stack.current.drain()
  await stack.current.drain()
}
const micro = async (path: string) => {
  const r = await fetch(`${stack.current.url}${path}`, { headers: withAuth() })
  return { status: r.status, body: (await r.json()) as any }
}
const thing = (data: Record<string, unknown>) => captureRequests((t) => void t.track(buildSelfDescribingEvent({ event: { schema: THING, data } })), { appId: 'reload' })
const collect = async (r: TrackerRequest) => {
  const res = await fetch(`${stack.current.url}${r.pathAndQuery}`, { method: r.method, headers: r.headers, body: r.body })
  expect(res.status).toBe(200)
  await settle()
}
const validate = async (r: TrackerRequest) => {
  const res = await fetch(`${stack.current.url}/micro/validate${r.pathAndQuery}`, { method: r.method, headers: withAuth(r.headers), body: r.body })
  expect(res.status).toBe(200)
  return ((await res.json()) as { results: { valid: boolean; badRow?: any }[] }).results
}
const eventIds = async (path: '/micro/good' | '/micro/bad') => {
  const list = (await micro(path)).body as any[]
  return path === '/micro/good' ? list.map((g) => g.event.event_id as string) : list.map((b) => JSON.parse(b.errors[1]).data.payload.enriched.event_id as string)
}
const eidOf = (r: TrackerRequest) => JSON.parse(r.body!).data[0].eid as string

describe('FLOE_IGLU_DIRS without a restart', () => {
  it('a schema file written under the directory turns the next event good, and /micro/iglu serves it', async () => {
    expect(startLog.join('\n')).toMatch(/FLOE_IGLU_DIRS: .*com\.acme\.reload\/broken\/jsonschema\/1-0-0 is not used: it is not valid JSON/)

    const [first] = await thing({ size: 1 })
    expect((await validate(first!))[0]).toMatchObject({ valid: false, badRow: { schema: expect.stringMatching(/schema_violations/) } })
    await collect(first!)
    expect(await eventIds('/micro/bad')).toContain(eidOf(first!))
    expect((await micro('/micro/iglu/com.acme.reload/thing/jsonschema/1-0-0')).status).toBe(404)

    writeSchema(schema({ size: { type: 'integer' } }))
    const [second] = await thing({ size: 2 })
    expect((await validate(second!))[0]).toMatchObject({ valid: true })
    await collect(second!)
    expect(await eventIds('/micro/good')).toContain(eidOf(second!))
    const served = await micro('/micro/iglu/com.acme.reload/thing/jsonschema/1-0-0')
    expect(served.status).toBe(200)
    expect(served.body).toMatchObject({ self: { name: 'thing' }, required: [] })
  }, 180_000)

  it('a changed file is picked up by the next batch and the next request', async () => {
    writeSchema(schema({ size: { type: 'integer' }, colour: { type: 'string' } }, ['colour']))
    const [third] = await thing({ size: 3 })
    const [v] = await validate(third!)
    expect(v).toMatchObject({ valid: false })
    expect(JSON.stringify(v!.badRow)).toContain('colour')
    await collect(third!)
    expect(await eventIds('/micro/bad')).toContain(eidOf(third!))
    expect((await micro('/micro/iglu/com.acme.reload/thing/jsonschema/1-0-0')).body).toMatchObject({ required: ['colour'] })

    const [fourth] = await thing({ size: 4, colour: 'blue' })
    expect((await validate(fourth!))[0]).toMatchObject({ valid: true })
    await collect(fourth!)
    expect(await eventIds('/micro/good')).toContain(eidOf(fourth!))
  }, 180_000)
})
