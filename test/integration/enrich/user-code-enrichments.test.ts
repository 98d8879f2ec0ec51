/**
 * The JavaScript and event specification enrichments in the local stack: the
 * enrich function reads their configuration files from the assets bucket, the
 * script runs in its sandbox, and a specification published through the
 * tracking-design API tags the events that follow it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { F } from '../../../lib/core/enrich/fields'
import { testClients, useLocalStack } from '../../support/stack'
import { readTexts } from '../../support/streams'
import { newTenant, objectSchema, putSchema } from '../tracking-design/helpers'

const SIGNUP = 'iglu:com.acme/signup/jsonschema/1-0-0'
const dir = mkdtempSync(join(tmpdir(), 'floe-user-code-enrichments-'))
const script = 'function process(event, params) { return [{ schema: "iglu:com.snowplowanalytics.iglu/anything-a/jsonschema/1-0-0", data: { team: params.team, app: event.getApp_id() } }] }'
writeFileSync(join(dir, 'javascript.json'), JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/javascript_script_config/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'javascript_script_config', enabled: true, parameters: { script: Buffer.from(script).toString('base64'), config: { team: 'growth' } } } }))
writeFileSync(join(dir, 'event_spec.json'), JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.enrichments/event_spec_enrichment_config/jsonschema/1-0-0', data: { vendor: 'com.snowplowanalytics.snowplow.enrichments', name: 'event_spec_enrichment_config', enabled: true, parameters: {} } }))
const stack = useLocalStack({ enrichmentsDir: dir, environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

describe('user-code enrichments in the stack', () => {
  it('runs the script and tags events with the specification published through the API', async () => {
    await putSchema(stack.current, SIGNUP, objectSchema({ plan: { type: 'string', maxLength: 20 } }))
    const t = await newTenant(stack.current)
    const created = await t.api('POST', '/event-specs/v1', { spec: { name: 'Signup', event: { source: SIGNUP } }, message: 'created' })
    expect(created.status, created.text).toBe(201)
    const id: string = created.body.data[0].id
    const published = await t.api('POST', '/event-specs/v1/publish', { eventSpecIds: [id] })
    expect(published.status, published.text).toBe(202)

    // enrich starts with its first batch, after the publish
    const ue = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: SIGNUP, data: { plan: 'pro' } } })).toString('base64url')
    const res = await fetch(`${stack.current.url}/i?e=ue&p=web&tv=js-3&aid=user-code&ue_px=${ue}`)
    expect(res.status).toBe(200)
    await stack.current.drain()
    const good = (await readTexts(testClients().kinesis, stack.current.names.streams.good)).map((l) => l.split('\t')).filter((c) => c[F.app_id] === 'user-code')
    expect(good).toHaveLength(1)
    const derived = JSON.parse(good[0]![F.derived_contexts]!).data
    expect(derived).toEqual(expect.arrayContaining([
      { schema: 'iglu:com.snowplowanalytics.snowplow/event_specification/jsonschema/1-0-4', data: { id, name: 'Signup', version: 1 } },
      { schema: 'iglu:com.snowplowanalytics.iglu/anything-a/jsonschema/1-0-0', data: { team: 'growth', app: 'user-code' } },
    ]))
  })
})
