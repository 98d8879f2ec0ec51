/**
 * The registry, the pipeline and the tracking-design API are one system:
 * schemas pushed to this deployment's registry (private ones included) are
 * what enrich validates events against, picked up without a restart once
 * the resolver's cache expires, and what the tracking-design API checks
 * specifications against, next to Iglu Central's.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { shred } from '../../../lib/core/enrich/shred'
import { encodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../../lib/core/thrift/types'
import { writeFileEnrichConfig } from '../../support/enrichments'
import { runFloe } from '../../support/process'
import { testClients, useLocalStack } from '../../support/stack'
import { readTexts } from '../../support/streams'
import { newTenant } from '../tracking-design/helpers'

const SUPER = '5a1f0c3e-2b4d-4e6f-8a9b-0c1d2e3f4a5b'
const CACHE_TTL_SECONDS = 1
const stack = useLocalStack({
  environment: {
    ACCEPT_LIMITED_USE_LICENSE: 'yes',
    FLOE_SUPER_API_KEY: SUPER,
    FLOE_IGLU_CENTRAL_URL: '',
    FLOE_RESOLVER_CACHE_TTL: String(CACHE_TTL_SECONDS),
  },
})

const VENDOR = 'com.acme.private'
const uri = (version: string) => `iglu:${VENDOR}/checkout/jsonschema/${version}`
const META = 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#'

function checkoutSchema(version: string, extra: Record<string, unknown> = {}) {
  return {
    $schema: META,
    self: { vendor: VENDOR, name: 'checkout', format: 'jsonschema', version },
    description: 'A checkout',
    type: 'object',
    properties: { orderId: { type: 'string', maxLength: 20 }, ...extra },
    required: ['orderId'],
    additionalProperties: false,
  }
}

/** A static-layout directory holding the given schemas. */
function schemaDir(...schemas: ReturnType<typeof checkoutSchema>[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'floe-own-'))
  for (const s of schemas) {
    const d = join(dir, s.self.vendor, s.self.name, 'jsonschema')
    mkdirSync(d, { recursive: true })
    writeFileSync(join(d, s.self.version), JSON.stringify(s))
  }
  return dir
}

/** Sends one tp2 POST of self-describing events, each with its app id. */
async function send(events: { aid: string; schema: string; data: unknown }[]) {
  const body = {
    schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4',
    data: events.map((e) => ({
      e: 'ue', p: 'web', tv: 'test-0', aid: e.aid,
      ue_pr: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: e.schema, data: e.data } }),
    })),
  }
  const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  expect(res.status).toBe(200)
}

async function outputs() {
  await stack.current.drain()
  const names = stack.current.names.streams
  const kinesis = testClients().kinesis
  const [good, bad] = await Promise.all([readTexts(kinesis, names.good), readTexts(kinesis, names.bad)])
  return { good: good.map((l) => shred(l) as Record<string, unknown>), bad: bad.map((l) => JSON.parse(l)) }
}

const badFor = (bad: any[], aid: string) => bad.filter((b) => JSON.stringify(b.data.payload).includes(aid))

describe("enrich validates against this deployment's registry", () => {
  it('a privately pushed schema validates good events and rejects bad ones; a new version is picked up without a restart', async () => {
    const pushed = await runFloe(['registry', 'push', schemaDir(checkoutSchema('1-0-0')), stack.current.url, SUPER])
    expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0)
    // Private: anonymous readers of the registry do not see it.
    expect((await fetch(`${stack.current.url}/registry-server/api/schemas/${VENDOR}/checkout/jsonschema/1-0-0`)).status).toBe(404)

    await send([
      { aid: 'valid', schema: uri('1-0-0'), data: { orderId: 'o-1' } },
      { aid: 'invalid', schema: uri('1-0-0'), data: { orderId: 42 } },
      { aid: 'early', schema: uri('1-0-1'), data: { orderId: 'o-2', coupon: 'X' } },
    ])
    let out = await outputs()
    const valid = out.good.filter((e) => e.app_id === 'valid')
    expect(valid).toHaveLength(1)
    expect(valid[0]!.unstruct_event_com_acme_private_checkout_1).toEqual({ orderId: 'o-1' })
    const [invalid] = badFor(out.bad, 'invalid')
    expect(invalid.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1')
    expect(invalid.data.failure.messages[0]).toMatchObject({ schemaKey: uri('1-0-0'), error: { error: 'ValidationError' } })
    const [early] = badFor(out.bad, 'early')
    expect(early.data.failure.messages[0]).toMatchObject({ schemaKey: uri('1-0-1'), error: { error: 'ResolutionError' } })
    expect(early.data.failure.messages[0].error.lookupHistory.find((h: { repository: string }) => h.repository === 'Floe registry')).toMatchObject({ errors: [{ error: 'NotFound' }] })

    const next = await runFloe(['registry', 'push', schemaDir(checkoutSchema('1-0-1', { coupon: { type: 'string' } })), stack.current.url, SUPER])
    expect(next.code, next.stdout + next.stderr).toBe(0)
    // The miss of 1-0-1 is cached for the TTL; once it has passed the new version is used, with no restart.
    await new Promise((r) => setTimeout(r, CACHE_TTL_SECONDS * 1000 + 100))
    await send([{ aid: 'later', schema: uri('1-0-1'), data: { orderId: 'o-3', coupon: 'Y' } }])
    out = await outputs()
    expect(out.good.filter((e) => e.app_id === 'later').map((e) => e.unstruct_event_com_acme_private_checkout_1)).toEqual([{ orderId: 'o-3', coupon: 'Y' }])
    expect(badFor(out.bad, 'later')).toEqual([])
  })

  it('the file variant pointed at the stack resolves the private schema with a read key, and not without one', async () => {
    const keys = await runFloe(['registry', 'keygen', VENDOR, stack.current.url, SUPER])
    expect(keys.code, keys.stderr).toBe(0)
    const read = /Read key: +([0-9a-f-]{36})/.exec(keys.stdout)![1]!
    const dir = mkdtempSync(join(tmpdir(), 'floe-file-'))
    mkdirSync(join(dir, 'in'))
    const event = { e: 'ue', p: 'web', tv: 'test-0', aid: 'file', ue_pr: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: uri('1-0-0'), data: { orderId: 'f-1' } } }) }
    writeFileSync(join(dir, 'in', 'p1'), encodeCollectorPayload({
      schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: '10.0.0.1', timestamp: Date.now(), encoding: 'UTF-8', collector: 'c', path: '/com.snowplowanalytics.snowplow/tp2',
      contentType: 'application/json', body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [event] }),
    }))
    const run = async (out: string, ...args: string[]) => {
      const config = writeFileEnrichConfig(join(dir, `${out}.hocon`), join(dir, 'in'), join(dir, out))
      const res = await runFloe(['enrich', '--config', config, ...args], { FLOE_IGLU_CENTRAL_URL: '' })
      expect(res.code, res.stderr).toBe(0)
      return res.stdout
    }
    expect(await run('with-key', '--registry', `${stack.current.url}/registry-server`, '--apikey', read)).toContain('good 1, incomplete 0, bad 0')
    expect(await run('anonymous', '--registry', stack.current.url)).toContain('good 0, incomplete 0, bad 1')
  })

  it('the tracking-design API checks specifications against the private schema and against Iglu Central', async () => {
    const t = await newTenant(stack.current)
    const spec = {
      name: 'Checkout',
      event: { source: uri('1-0-0'), schema: { type: 'object', properties: { orderId: { type: 'string', maxLength: 10 } }, required: ['orderId'], additionalProperties: false } },
      entities: { tracked: [{ source: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0' }], enriched: [] },
    }
    const created = await t.api('POST', '/event-specs/v1', { spec })
    expect(created.status, created.text).toBe(201)
    const missing = await t.api('POST', '/event-specs/v1', { spec: { ...spec, name: 'Other', entities: { tracked: [{ source: 'iglu:com.snowplowanalytics.snowplow/no_such_thing/jsonschema/1-0-0' }] } } })
    expect(missing.status).toBe(422)
    expect(missing.body.errors[0].source).toBe('spec.entities.tracked[0].source')
  })
})
