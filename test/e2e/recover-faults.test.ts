/**
 * A replay killed with kill -9 mid-way: `floe start` (a separate process,
 * started without ACCEPT_LIMITED_USE_LICENSE: the licence is accepted on the
 * control plane) holds 2,000 schema-violation bad rows. A replay through
 * `POST /control-plane/recover` kills the stack after writing its third
 * page and before marking it (the fault-injection point
 * FLOE_RECOVER_FAULT=written:2); the stack restarts on the same data and
 * ends the dead run as interrupted, releasing what it had not marked. A
 * second replay is killed with kill -9 from here, at a time (once it has
 * claimed 600 more rows); the stack restarts again, and a third run
 * (`floe recover`, a shell's environment) replays the rest. Every event is
 * then good exactly once, counted by event id: 0 lost, 0 duplicates, no run
 * left running.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { makeClients } from '../../lib/aws/clients'
import { RECOVERY_HEADER } from '../../lib/core/recover/events'
import { schemaForPrefix, searchDb, tablesOf, type SearchDb } from '../../lib/core/search/store'
import type { EndpointsFile } from '../../lib/local/cli-start'
import { postgresClient, type PostgresClient } from '../../lib/runtime/postgres'
import { eventually, floe, killOrphanDynamo, runFloe, type Running } from '../support/process'
import { basicAuth, TEST_CREDENTIALS } from '../support/stack'
import { readPayloads } from '../support/streams'

const SUPER = '8d1e0c2a-4b3f-4a5e-9c8d-1e2f3a4b5c6e'
const EVENTS = 2_000
const AID = `fault-${randomUUID().slice(0, 8)}`
const VENDOR = 'com.acme.fault'
const META = 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#'
const UE = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'
const dir = mkdtempSync(join(tmpdir(), 'floe-recover-faults-'))
const running: Running[] = []
const clients: PostgresClient[] = []

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined)
  for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL')
  killOrphanDynamo(dir)
  rmSync(dir, { recursive: true, force: true })
})

// The licence is not in the environment: it is accepted on the control plane.
const ENV = { FLOE_DATA_DIR: dir, PORT: '0', FLOE_SUPER_API_KEY: SUPER, FLOE_IGLU_CENTRAL_URL: '', FLOE_RESOLVER_CACHE_TTL: '1', FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password, ACCEPT_LIMITED_USE_LICENSE: '' }

async function start(extra: Record<string, string> = {}): Promise<{ proc: Running; ep: EndpointsFile; db: SearchDb }> {
  const proc = floe(['start'], { ...ENV, ...extra })
  running.push(proc)
  await proc.waitFor('Floe is up', 180_000)
  const ep = JSON.parse(readFileSync(join(dir, 'endpoints.json'), 'utf8')) as EndpointsFile & { postgres: string }
  const sql = postgresClient(ep.postgres)
  clients.push(sql)
  return { proc, ep, db: searchDb(sql, schemaForPrefix('floe')) }
}

const auth = (url: string, extra: Record<string, string> = {}) => ({ authorization: basicAuth(), origin: url, ...extra })

async function count(db: SearchDb, sql: string, params: unknown[] = []): Promise<number> {
  const r = await db.sql.query<{ n: number }>(sql, params)
  return Number(r.rows[0]!.n)
}

describe('a replay killed with kill -9', () => {
  it('leaves every selected row replayed or selectable again; after a restart and a second run each event is good exactly once', async () => {
    const first = await start({ FLOE_RECOVER_FAULT: 'written:2' })
    const t = tablesOf(first.db)
    const url = first.ep.http
    const licence = await fetch(`${url}/control-plane/license`, { method: 'POST', headers: auth(url, { 'content-type': 'application/x-www-form-urlencoded' }), body: 'accept=yes' })
    expect(licence.status).toBe(200)

    // 2,000 events on a schema the registry does not have yet: 2,000 schema_violations bad rows
    const ids: string[] = []
    for (let b = 0; b < EVENTS / 200; b++) {
      const data = Array.from({ length: 200 }, () => {
        const eid = randomUUID()
        ids.push(eid)
        return { e: 'ue', p: 'web', tv: 'test-0', aid: AID, eid, ue_pr: JSON.stringify({ schema: UE, data: { schema: `iglu:${VENDOR}/tap/jsonschema/1-0-0`, data: { n: ids.length } } }) }
      })
      const r = await fetch(`${url}/com.snowplowanalytics.snowplow/tp2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data }) })
      expect(r.status).toBe(200)
    }
    const badOfApp = `SELECT count(*)::int AS n FROM ${t.bad} WHERE recovered IS NULL AND strpos(line, $1) > 0`
    // (the store's tables exist once its first writer migrated it)
    await eventually(async () => ((await count(first.db, badOfApp, [AID]).catch(() => 0)) === EVENTS ? true : undefined), `${EVENTS} bad rows in the search store`, 180_000)

    const schema = { $schema: META, self: { vendor: VENDOR, name: 'tap', format: 'jsonschema', version: '1-0-0' }, description: 'a tap', type: 'object', properties: { n: { type: 'integer' } } }
    const put = await fetch(`${url}/registry-server/api/schemas/${VENDOR}/tap/jsonschema/1-0-0`, { method: 'PUT', headers: { apikey: SUPER, 'content-type': 'application/json' }, body: JSON.stringify(schema) })
    expect(put.status).toBe(201)
    await new Promise((r) => setTimeout(r, 1200)) // enrich's cached miss expires (FLOE_RESOLVER_CACHE_TTL=1)

    const recover = (at: string) => fetch(`${at}/control-plane/recover`, { method: 'POST', headers: auth(at, { 'content-type': 'application/json' }), body: JSON.stringify({ query: AID }) }).catch((err: Error) => err)
    const claimed = (db: SearchDb) => count(db, `SELECT count(*)::int AS n FROM ${t.recoveryClaims}`)
    const replayedClaims = (db: SearchDb) => count(db, `SELECT count(*)::int AS n FROM ${t.recoveryClaims} WHERE state = 'replayed'`)
    const payloadsOf = async (ep: EndpointsFile, runId: string) => (await readPayloads(makeClients(ep).kinesis, 'floe-raw')).filter((p) => p.headers?.includes(`${RECOVERY_HEADER}: ${runId}`)).length
    const runIds = async (db: SearchDb) => (await db.sql.query<{ id: string }>(`SELECT id FROM ${t.recoveryRuns} ORDER BY started_at`)).rows.map((x) => x.id)

    // (1) killed by the fault point after writing page 2 (rows 400 to 599), before marking it
    expect(await recover(url)).toBeInstanceOf(Error)
    expect(await first.proc.exited).toBe('SIGKILL')
    const second = await start()
    const [runA] = await runIds(second.db)
    expect(second.proc.output()).toContain(`recovery run ${runA} was interrupted`)
    expect(await payloadsOf(second.ep, runA!)).toBe(600)
    expect(await replayedClaims(second.db)).toBe(400)
    expect(await count(second.db, badOfApp, [AID])).toBe(EVENTS - 400)
    const statusA = (await (await fetch(`${second.ep.http}/control-plane/recover/${runA}`, { headers: { authorization: basicAuth() } })).json()) as { state: string; failure: { released: number } }
    expect(statusA).toMatchObject({ state: 'interrupted', failure: { released: 200 } })

    // (2) killed with kill -9 from here once the second run has claimed 600 rows
    const replay = recover(second.ep.http)
    await eventually(async () => ((await claimed(second.db)) >= 400 + 600 ? true : undefined), 'the second run to claim 600 rows', 120_000)
    second.proc.child.kill('SIGKILL')
    await second.proc.exited
    expect(await replay).toBeInstanceOf(Error) // no answer: the stack was killed before the run ended

    const third = await start()
    const t2 = tablesOf(third.db)
    const [, runB] = await runIds(third.db)
    expect(third.proc.output()).toContain(`recovery run ${runB} was interrupted`)
    const marked = await replayedClaims(third.db)
    const onRawB = await payloadsOf(third.ep, runB!)
    // every selected row is replayed (marked) or selectable again, and nothing is pending
    expect(await count(third.db, `SELECT count(*)::int AS n FROM ${t2.recoveryClaims} WHERE state = 'pending'`)).toBe(0)
    expect(marked + (await count(third.db, badOfApp, [AID]))).toBe(EVENTS)
    const statusB = (await (await fetch(`${third.ep.http}/control-plane/recover/${runB}`, { headers: { authorization: basicAuth() } })).json()) as { state: string; failure: { released: number } }
    expect(statusB.state).toBe('interrupted')
    console.log(`kill -9 mid-replay: run 1 (fault point after writing page 2): 400 rows marked, 600 payloads on raw, 200 released; run 2 (timed kill): ${marked - 400} rows marked, ${onRawB} payloads on raw, ${statusB.failure.released} released`)

    // (3) the third run: floe recover from a shell (no licence in its environment)
    const own: Record<string, string> = {}
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AWS_') && !k.startsWith('FLOE_') && k !== 'ACCEPT_LIMITED_USE_LICENSE') own[k] = v
    const run = await runFloe(['recover', '--query', AID, '--json'], { ...own, FLOE_DATA_DIR: dir, FLOE_RECOVER_WAIT_SECONDS: '240' }, { replaceEnvironment: true })
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as Record<string, number>
    expect(report).toMatchObject({ selected: EVENTS - marked, replayed: EVENTS - marked, nowGood: EVENTS - marked, failedAgain: 0, stillPending: 0 })

    // every event good exactly once by event id: 0 lost, 0 duplicates
    const goodIds = async () => (await third.db.sql.query<{ id: string }>(`SELECT id FROM ${t2.good} WHERE app_id = $1`, [AID])).rows.map((x) => x.id)
    let good: string[] = []
    for (const deadline = Date.now() + 180_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      good = await goodIds()
      if (good.length >= EVENTS) break
    }
    const lost = ids.filter((x) => !good.includes(x.toLowerCase()))
    expect(lost.length, `${lost.length} events lost (neither good nor selectable)`).toBe(0)
    expect(good.length).toBe(EVENTS)
    expect(new Set(good).size).toBe(EVENTS)
    expect(await count(third.db, badOfApp, [AID])).toBe(0)

    // nothing left running
    expect(await count(third.db, `SELECT count(*)::int AS n FROM ${t2.recoveryRuns} WHERE finished_at IS NULL`)).toBe(0)
    expect(await count(third.db, `SELECT count(*)::int AS n FROM ${t2.recoveryClaims} WHERE state = 'replayed'`)).toBe(EVENTS)
    third.proc.child.kill('SIGTERM')
    expect(await third.proc.exited).toBe(0)
  }, 900_000)
})
