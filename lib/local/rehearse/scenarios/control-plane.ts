/**
 * The control plane through the template's authorizer (basic authentication
 * with the password the scenarios set, a wrong password, a cross-site POST
 * refused, an enrichment upload, a restart), a recovery run through the
 * queue and its worker, and `/metrics`.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { call, check, expectStatus, ScenarioSkipped, type ScenarioContext } from './target'

/** The enrichment the scenario uploads: IP anonymization (no file or service behind it). */
const ANON_IP = {
  schema: 'iglu:com.snowplowanalytics.snowplow/anon_ip/jsonschema/1-0-1',
  data: { name: 'anon_ip', vendor: 'com.snowplowanalytics.snowplow', enabled: true, parameters: { anonOctets: 1, anonSegments: 1 } },
}

async function restartGeneration(ctx: ScenarioContext, service: string): Promise<number> {
  const r = await ctx.target.clients.ddb.send(new GetItemCommand({ TableName: ctx.names.tables.settings, Key: { pk: { S: 'control-plane' }, sk: { S: 'restarts' } }, ConsistentRead: true }))
  return Number(r.Item?.[`gen_${service}`]?.N ?? 0)
}

export async function controlPlaneScenario(ctx: ScenarioContext): Promise<string> {
  const cp = ctx.url('/control-plane')
  const none = await call(`${cp}/version`)
  expectStatus(none, 401, 'GET /control-plane/version without credentials')
  await ctx.signIn()
  const version = await call(`${cp}/version`, { headers: { authorization: ctx.auth() } })
  expectStatus(version, 200, 'GET /control-plane/version with the password set')
  const home = await call(ctx.url('/home'), { headers: { authorization: ctx.auth() } })
  expectStatus(home, 200, 'GET /home with the password set')
  check(/<html/i.test(home.text), `GET /home: not a page: ${home.text.slice(0, 120)}`)
  const wrong = await call(`${cp}/version`, { headers: { authorization: ctx.auth(`${ctx.password}-wrong`) } })
  expectStatus(wrong, 401, 'GET /control-plane/version with a wrong password')

  const upload = () => {
    const form = new FormData()
    form.append('enrichmentjson', new Blob([JSON.stringify(ANON_IP)], { type: 'application/json' }), 'anon_ip.json')
    return form
  }
  const crossSite = await call(`${cp}/enrichments`, { method: 'POST', headers: { authorization: ctx.auth(), origin: 'https://elsewhere.example', 'sec-fetch-site': 'cross-site' }, body: upload() })
  expectStatus(crossSite, 403, 'POST /control-plane/enrichments from another site (Origin, Sec-Fetch-Site: cross-site)')
  const uploaded = await call(`${cp}/enrichments`, { method: 'POST', headers: { authorization: ctx.auth() }, body: upload() })
  expectStatus(uploaded, 200, 'POST /control-plane/enrichments (anon_ip.json)')
  const listed = await call(`${cp}/enrichments`, { headers: { authorization: ctx.auth() } })
  expectStatus(listed, 200, 'GET /control-plane/enrichments')
  const files = listed.json<{ file: string; enabled: boolean; problem?: string }[]>()
  const stored = files.find((f) => f.file === 'anon_ip.json')
  check(stored && stored.enabled && !stored.problem, `anon_ip.json not listed as enabled after the upload: ${listed.text.slice(0, 300)}`)

  const before = await restartGeneration(ctx, 'enrich')
  const restarted = await call(`${cp}/restart-service`, { method: 'PUT', headers: { authorization: ctx.auth(), 'content-type': 'application/x-www-form-urlencoded' }, body: 'service_name=enrich' })
  expectStatus(restarted, 200, 'PUT /control-plane/restart-service service_name=enrich')
  const after = await restartGeneration(ctx, 'enrich')
  check(after === before + 1, `the restart of enrich is not recorded in the settings table (generation ${before} → ${after})`)
  return 'basic auth: 401 without, 200 with the password set (the control plane, /home), 401 with a wrong one; a cross-site POST refused (403); anon_ip.json uploaded and listed; enrich restarted (its generation read back)'
}

interface RecoverAnswer {
  readonly runId?: string
  readonly status?: string
  readonly selected?: number
  readonly replayed?: number
  readonly message?: string
}

interface RunRecord {
  readonly state?: string
  readonly failure?: { readonly reason?: string }
  readonly report?: { readonly replayed?: number; readonly shares?: number }
}

export async function recoveryScenario(ctx: ScenarioContext): Promise<string> {
  const missing = ctx.target.unavailable?.searchStore ?? ctx.target.unavailable?.queue ?? ctx.target.unavailable?.enrich
  if (missing) throw new ScenarioSkipped(missing)
  await ctx.signIn()
  const since = new Date(Date.now() - 1000).toISOString()
  // a failed event of its own: a link click without its required targetUrl
  const appId = `rehearsal-recover-${randomBytes(4).toString('hex')}`
  const ue = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1', data: { elementId: 'recover-me' } } })).toString('base64url')
  const sent = await call(ctx.url(`/i?e=ue&aid=${appId}&p=web&tv=node-4.8.0&eid=${randomUUID()}&ue_px=${ue}`))
  expectStatus(sent, 200, 'GET /i (a schema violation to recover)')
  const selection = { source: 'archive', failureType: 'schema_violations', since }
  const post = (body: unknown) => call(ctx.url('/control-plane/recover'), { method: 'POST', headers: { authorization: ctx.auth(), 'content-type': 'application/json' }, body: JSON.stringify(body) })
  // the archive's own batching window passes before the bad row is archived: the preview says when it is there
  await ctx.until('the bad row in the archive (a dry run selecting it)', async () => {
    const r = await post({ ...selection, dryRun: true })
    if (r.status === 404) return undefined
    expectStatus(r, 200, 'POST /control-plane/recover (dry run)')
    return (r.json<RecoverAnswer>().selected ?? 0) > 0 ? true : undefined
  }, undefined, Math.max(ctx.waitMs, ctx.options.archiveWaitMs ?? 150_000))
  const started = await post(selection)
  check(started.status === 202, `POST /control-plane/recover from the archive: ${started.status} (expected 202: queued) ${started.text.slice(0, 300)}`)
  const runId = started.json<RecoverAnswer>().runId
  check(runId, `the queued run has no runId: ${started.text.slice(0, 200)}`)
  let state = ''
  const record = await ctx.until(`recovery run ${runId} to end (GET /control-plane/recover/${runId})`, async () => {
    const r = await call(ctx.url(`/control-plane/recover/${runId}`), { headers: { authorization: ctx.auth() } })
    expectStatus(r, 200, `GET /control-plane/recover/${runId}`)
    const rec = r.json<RunRecord>()
    state = rec.state ?? ''
    return rec.state === 'running' ? undefined : rec
  }, () => state)
  check(record.state === 'done', `recovery run ${runId} ended ${record.state}: ${record.failure?.reason ?? ''}`)
  check((record.report?.shares ?? 0) >= 1 && (record.report?.replayed ?? 0) >= 1, `recovery run ${runId}: ${JSON.stringify(record.report)}`)
  return `run ${runId} queued, its ${record.report!.shares} share(s) replayed by the worker (${record.report!.replayed} replayed)`
}

export async function metricsScenario(ctx: ScenarioContext): Promise<string> {
  const none = await call(ctx.url('/metrics'))
  expectStatus(none, 401, 'GET /metrics without credentials')
  await ctx.signIn()
  const r = await call(ctx.url('/metrics'), { headers: { authorization: ctx.auth(), accept: 'application/json' } })
  const cloudwatch = ctx.target.unavailable?.cloudwatch
  if (cloudwatch) {
    // without CloudWatch the function says which service it could not reach, and when to retry
    expectStatus(r, 503, 'GET /metrics without CloudWatch')
    check(/unavailable/.test(r.text) && r.headers.get('retry-after'), `GET /metrics without CloudWatch: 503 without the reason or Retry-After: ${r.text.slice(0, 200)}`)
    throw new ScenarioSkipped(`${cloudwatch} (GET /metrics: 401 without credentials; 503 with Retry-After naming the unavailable service)`)
  }
  expectStatus(r, 200, 'GET /metrics')
  const body = r.json<Record<string, unknown>>()
  check(body && typeof body === 'object', `GET /metrics: not an object: ${r.text.slice(0, 200)}`)
  const prom = await call(ctx.url('/metrics?format=prometheus'), { headers: { authorization: ctx.auth() } })
  expectStatus(prom, 200, 'GET /metrics?format=prometheus')
  check(/^# (HELP|TYPE) /m.test(prom.text), `GET /metrics?format=prometheus: no exposition text: ${prom.text.slice(0, 200)}`)
  return `JSON (${Object.keys(body).slice(0, 6).join(', ')}) and Prometheus text`
}

export async function healthScenario(ctx: ScenarioContext): Promise<string> {
  const r = await call(ctx.url('/health'))
  expectStatus(r, 200, 'GET /health')
  check(/^ok/.test(r.text), `GET /health: ${r.text.slice(0, 300)}`)
  return r.text.trim().split('\n').join('; ')
}
