/**
 * A replay's report is what became of its events in the search store, not
 * the in-process preview: some replayed events become good, some fail again
 * (a bad row carrying the run), each counted by event id. On a stack whose
 * licence was accepted on the control plane (no ACCEPT_LIMITED_USE_LICENSE
 * anywhere), and with steps documents over 64 KiB refused.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runFloe } from '../../support/process'
import { objectSchema, pushSchema, warmControlPlane } from '../../support/schemas'
import { uniquePrefix, useLocalStack, withAuth } from '../../support/stack'

const SUPER = '5c2e4c1a-3d5f-4a6b-8c7d-9e0f1a2b3c4e'
const PREFIX = uniquePrefix('rr')
const ENV = { ACCEPT_LIMITED_USE_LICENSE: '', FLOE_SUPER_API_KEY: SUPER, FLOE_IGLU_CENTRAL_URL: '' }
const stack = useLocalStack({ namePrefix: PREFIX, environment: ENV })
const VENDOR = 'com.acme.report'
const UE = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'

beforeAll(async () => {
  await warmControlPlane(stack.current.url)
  const accepted = await fetch(`${stack.current.url}/control-plane/license`, {
    method: 'POST',
    headers: withAuth({ 'content-type': 'application/x-www-form-urlencoded', origin: stack.current.url }),
    body: 'accept=yes',
  })
  expect(accepted.status).toBe(200)
}, 120_000)

const push = (name: string, properties: Record<string, unknown>) => pushSchema(stack.current.url, SUPER, objectSchema(VENDOR, name, '1-0-0', properties))

async function send(aid: string, name: string, datas: unknown[]): Promise<string[]> {
  const ids = datas.map(() => randomUUID())
  const data = datas.map((d, i) => ({ e: 'ue', p: 'web', tv: 'test-0', aid, eid: ids[i]!, ue_pr: JSON.stringify({ schema: UE, data: { schema: `iglu:${VENDOR}/${name}/jsonschema/1-0-0`, data: d } }) }))
  const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data }),
  })
  expect(res.status).toBe(200)
  await stack.current.drain()
  await stack.current.drain()
  return ids
}

async function badCount(q: string): Promise<number> {
  const r = await fetch(`${stack.current.url}/search-store/bad/_count?q=${encodeURIComponent(q)}`, { headers: withAuth() })
  return ((await r.json()) as { count: number }).count
}

/** `floe recover …` against this stack, without ACCEPT_LIMITED_USE_LICENSE. */
async function recoverCli(args: string[], extra: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'floe-report-data-'))
  writeFileSync(join(dir, 'endpoints.json'), JSON.stringify({ http: stack.current.url, ...stack.current.endpoints, namePrefix: PREFIX, pid: process.pid }))
  // a shell's environment: none of what the stack in this process set in it
  const own: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AWS_') && !k.startsWith('FLOE_') && k !== 'ACCEPT_LIMITED_USE_LICENSE') own[k] = v
  return runFloe(['recover', ...args], { ...own, FLOE_DATA_DIR: dir, ...extra }, { replaceEnvironment: true })
}

async function recoverApi(body: unknown) {
  const r = await fetch(`${stack.current.url}/control-plane/recover`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json' }), body: JSON.stringify(body) })
  return { status: r.status, body: (await r.json()) as Record<string, any> }
}

describe('the report of a replay', () => {
  it('floe recover works on a licence accepted on the control plane, and reports nowGood and failedAgain from the store, by event id', async () => {
    // the running stack has no licence in its environment: enrich runs on the recorded acceptance
    expect(process.env.ACCEPT_LIMITED_USE_LICENSE ?? '').toBe('')
    const ids = await send('report-one', 'order', [{ total: 10 }, { total: 20 }, { total: 30 }, { total: 1.5 }, { total: 2.5 }])
    expect(await badCount('report-one')).toBe(5)
    await push('order', { total: { type: 'integer' } })

    const preview = await recoverCli(['--query', 'report-one', '--dry-run', '--json'])
    expect(preview.code, preview.stderr).toBe(0)
    expect(JSON.parse(preview.stdout)).toMatchObject({ dryRun: true, selected: 5, wouldBeGood: 3, stillFailing: 2 })
    // the summary once, on stdout
    const text = await recoverCli(['--query', 'report-one', '--dry-run'])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout.match(/5 selected/g)).toHaveLength(1)
    expect(text.stderr).not.toMatch(/selected/)

    const run = await recoverCli(['--query', 'report-one', '--json'])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report).toMatchObject({ selected: 5, replayed: 5, nowGood: 3, failedAgain: 2, stillPending: 0 })
    expect(report.failedAgainReasons[0]).toMatchObject({ count: 2, reason: expect.stringContaining(`iglu:${VENDOR}/order/jsonschema/1-0-0`) })
    // what the store holds: 3 good events (the first three ids), 2 new bad rows of this run
    const good = await fetch(`${stack.current.url}/search-store/good/_count?q=${encodeURIComponent('app_id:report-one')}`, { headers: withAuth() })
    expect(((await good.json()) as { count: number }).count).toBe(3)
    expect(await badCount(`report-one AND "${report.runId}"`)).toBe(2)
    expect(ids).toHaveLength(5)
    // the record of the run keeps the outcome
    const status = await fetch(`${stack.current.url}/control-plane/recover/${report.runId}`, { headers: withAuth() })
    // …and the status reads it from the store again, by the event ids the run's claims keep
    expect(await status.json()).toMatchObject({ state: 'done', report: { replayed: 5, nowGood: 3, failedAgain: 2 }, outcome: { nowGood: 3, failedAgain: 2, stillPending: 0, untracked: 0 } })
  }, 300_000)

  it('the summary line says what the store says: "now good" only for events stored as good, "failed again" with the reason', async () => {
    await send('report-two', 'tap', [{ n: 1 }, { n: 'x' }])
    await push('tap', { n: { type: 'integer' } })
    const run = await recoverCli(['--query', 'report-two'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/: 2 selected · 2 fixed · 2 replayed · 1 now good · 1 failed again: schema_violations: iglu:com\.acme\.report\/tap\/jsonschema\/1-0-0/)
    expect(run.stdout).toContain('preview before the replay: 1 would be good · 1 would fail')
  }, 300_000)

  it('the API answers the same counts from the store', async () => {
    await send('report-three', 'view', [{ n: 1 }, { n: 2 }, { n: 'three' }])
    await push('view', { n: { type: 'integer' } })
    const r = await recoverApi({ query: 'report-three' })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ selected: 3, replayed: 3, nowGood: 2, failedAgain: 1, stillPending: 0, wouldBeGood: 2 })
  }, 300_000)

  it('refuses a steps document over 64 KiB: the API with 413, the CLI with exit 2', async () => {
    const steps = { name: 'x'.repeat(80_000), steps: [{ op: 'remove', field: 'aid' }] }
    const api = await recoverApi({ query: 'nothing', steps, dryRun: true })
    expect(api.status).toBe(413)
    expect(api.body.message).toContain('65536 bytes')
    const file = join(mkdtempSync(join(tmpdir(), 'floe-steps-')), 'steps.json')
    writeFileSync(file, JSON.stringify(steps))
    const cli = await recoverCli(['--query', 'nothing', '--steps', file, '--dry-run'])
    expect(cli.code).toBe(2)
    expect(cli.stderr).toContain('65536 bytes')
  }, 120_000)
})
