/**
 * The testing loop of the Micro API through the rehearsal: a tracker's
 * request validated synchronously (`/micro/validate`, its own function:
 * nothing written), then sent to the collector and waited for
 * (`POST /micro/wait`, answered once the loader stored it) and read by its id
 * (`GET /micro/events/<id>`).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { call, check, expectStatus, ScenarioSkipped, type ScenarioContext } from './target'

const TP2 = '/com.snowplowanalytics.snowplow/tp2'

function body(appId: string, eventId: string, missingSchema: boolean): string {
  const event: Record<string, string> = { e: 'pv', p: 'web', tv: 'js-4.0.0', aid: appId, eid: eventId, url: 'https://shop.example/rehearsal' }
  if (missingSchema) {
    event.e = 'ue'
    event.ue_pr = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme.rehearsal/never_pushed/jsonschema/1-0-0', data: {} } })
  }
  return JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [event] })
}

export async function microScenario(ctx: ScenarioContext): Promise<string> {
  const u = ctx.target.unavailable ?? {}
  if (u.enrich) throw new ScenarioSkipped(u.enrich)
  if (u.searchStore) throw new ScenarioSkipped(u.searchStore)
  await ctx.signIn()
  const appId = `rehearsal-micro-${randomBytes(4).toString('hex')}`
  const json = { authorization: ctx.auth(), 'content-type': 'application/json' }

  type Results = { results: { valid: boolean; event?: { app_id?: string }; badRow?: { schema?: string } }[] }
  const valid = await call(ctx.url(`/micro/validate${TP2}`), { method: 'POST', headers: json, body: body(appId, randomUUID(), false) })
  expectStatus(valid, 200, `POST /micro/validate${TP2} (a page view)`)
  const v = valid.json<Results>().results
  check(v.length === 1 && v[0]!.valid && v[0]!.event?.app_id === appId, `/micro/validate answered ${valid.text.slice(0, 300)} for a valid page view`)
  const invalid = await call(ctx.url(`/micro/validate${TP2}`), { method: 'POST', headers: json, body: body(appId, randomUUID(), true) })
  expectStatus(invalid, 200, `POST /micro/validate${TP2} (a schema in no registry)`)
  const b = invalid.json<Results>().results
  check(b.length === 1 && !b[0]!.valid && /schema_violations/.test(b[0]!.badRow?.schema ?? ''), `/micro/validate answered ${invalid.text.slice(0, 300)} for an event whose schema is in no registry`)
  const unsent = await call(ctx.url('/micro/wait'), { method: 'POST', headers: json, body: JSON.stringify({ filters: [{ column: 'app_id', values: [appId] }], timeout: 0 }) })
  expectStatus(unsent, 200, 'POST /micro/wait before anything was sent')
  check(unsent.json<{ total: number }>().total === 0, `/micro/validate stored events: /micro/wait found ${unsent.text.slice(0, 200)}`)

  const eventId = randomUUID()
  const sent = await call(ctx.url(TP2), { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(appId, eventId, false) })
  expectStatus(sent, 200, `POST ${TP2} (the page view, to the collector)`)
  const waited = await call(ctx.url('/micro/wait'), { method: 'POST', headers: json, body: JSON.stringify({ filters: [{ column: 'app_id', values: [appId] }], count: 1, timeout: Math.min(ctx.waitMs, 25_000) }) })
  expectStatus(waited, 200, 'POST /micro/wait for the page view')
  const w = waited.json<{ complete: boolean; total: number; events: { event_id?: string }[] }>()
  check(w.complete && w.total === 1 && w.events[0]?.event_id === eventId, `/micro/wait answered ${waited.text.slice(0, 300)}`)
  const one = await call(ctx.url(`/micro/events/${eventId}`), { headers: { authorization: ctx.auth() } })
  expectStatus(one, 200, `GET /micro/events/${eventId}`)
  const e = one.json<{ eventId: string; valid: boolean; badRows: unknown[] }>()
  check(e.eventId === eventId && e.valid && e.badRows.length === 0, `/micro/events/<id> answered ${one.text.slice(0, 300)}`)
  const unknown = await call(ctx.url(`/micro/events/${randomUUID()}`), { headers: { authorization: ctx.auth() } })
  expectStatus(unknown, 404, 'GET /micro/events/<an id nothing has>')
  return '/micro/validate: a page view valid, an unknown schema its schema_violations bad row, nothing stored; the page view sent to the collector, /micro/wait answered once it was stored, /micro/events/<id> gave it (404 for an unknown id)'
}
