/**
 * Recovery on the local stack with a snowplow-event-recovery configuration:
 * `config` in POST /control-plane/recover and `floe recover --config`.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { runFloe } from '../../support/process'
import { postTp2, recoverRequest, warmControlPlane } from '../../support/schemas'
import { uniquePrefix, useLocalStack, withAuth } from '../../support/stack'

const SUPER = '7b2e4c1a-3d5f-4a6b-8c7d-9e0f1a2b3c4d'
const PREFIX = uniquePrefix('er')
const ENV = { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_SUPER_API_KEY: SUPER, FLOE_IGLU_CENTRAL_URL: '', FLOE_RESOLVER_CACHE_TTL: '1' }
const stack = useLocalStack({ namePrefix: PREFIX, environment: ENV })

beforeAll(() => warmControlPlane(stack.current.url), 120_000)

const VENDOR = 'com.acme.evrec'
const UE = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'
const settle = async () => {
  await stack.current.drain()
  await stack.current.drain()
}

async function send(aid: string, version: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID())
  const data = ids.map((eid, i) => ({ e: 'ue', p: 'web', tv: 'test-0', aid, eid, ue_pr: JSON.stringify({ schema: UE, data: { schema: `iglu:${VENDOR}/click/jsonschema/${version}`, data: { label: `l${i}` } } }) }))
  await postTp2(stack.current.url, data)
  await settle()
  return ids
}

const recoverApi = (body: unknown) => recoverRequest(stack.current.url, body)

const CONFIG = {
  schema: 'iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0',
  data: {
    'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/*-*-*': [
      {
        name: 'click-version',
        conditions: [{ op: 'Test', path: '$.payload.raw.parameters.ue_pr.data.schema', value: { regex: `^iglu:${VENDOR.replace(/\./g, '\\.')}/click/jsonschema/1-0-9$` } }],
        steps: [{ op: 'Replace', path: '$.raw.parameters.[?(@.name=~ue_pr)].value.data.schema', match: '1-0-9$', value: '1-0-0' }],
      },
    ],
  },
}

describe('recovery with a snowplow-event-recovery configuration', () => {
  it('config in the API previews; floe recover --config replays; rows no flow matches become recovery_error rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-evrec-'))
    mkdirSync(join(dir, VENDOR, 'click', 'jsonschema'), { recursive: true })
    writeFileSync(join(dir, VENDOR, 'click', 'jsonschema', '1-0-0'), JSON.stringify({
      $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
      self: { vendor: VENDOR, name: 'click', format: 'jsonschema', version: '1-0-0' }, type: 'object', properties: { label: { type: 'string' } }, additionalProperties: false,
    }))
    const pushed = await runFloe(['registry', 'push', dir, stack.current.url, SUPER])
    expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0)
    const ids = await send('evrec-fix', '1-0-9', 3)
    await send('evrec-other', '1-0-8', 1)

    const preview = await recoverApi({ query: 'evrec-fix', config: CONFIG, dryRun: true })
    expect(preview.status).toBe(200)
    expect(preview.body).toMatchObject({ dryRun: true, selected: 3, fixed: 3, wouldBeGood: 3, stillFailing: 0 })
    const other = await recoverApi({ query: 'evrec-other', config: CONFIG, dryRun: true })
    expect(other.body).toMatchObject({ selected: 1, fixed: 0, broken: 1 })
    expect(other.body.reasons[0].reason).toContain('FailedToMatchConfiguration')

    const file = join(dir, 'config.json')
    writeFileSync(file, JSON.stringify(CONFIG))
    const data = mkdtempSync(join(tmpdir(), 'floe-evrec-data-'))
    writeFileSync(join(data, 'endpoints.json'), JSON.stringify({ http: stack.current.url, ...stack.current.endpoints, namePrefix: PREFIX, pid: process.pid }))
    const run = await runFloe(['recover', '--query', 'evrec-fix', '--config', file, '--json'], { ...ENV, FLOE_DATA_DIR: data, FLOE_RECOVER_WAIT_SECONDS: '0' })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ selected: 3, replayed: 3 })
    await settle()
    const good = ((await (await fetch(`${stack.current.url}/micro/good`, { headers: withAuth() })).json()) as { event: Record<string, any> }[]).filter((g) => g.event.app_id === 'evrec-fix')
    expect(good.map((g) => g.event.event_id).sort()).toEqual([...ids].sort())
    expect(good.map((g) => g.event.unstruct_event.data.schema)).toEqual(Array(3).fill(`iglu:${VENDOR}/click/jsonschema/1-0-0`))
  }, 300_000)
})
