/**
 * Trackers through the rehearsal: Snowplow's node tracker (a GET emitter and
 * a POST emitter) and the JSON body the browser tracker posts, to the
 * collector's route; then read back where enrich put each event (the good,
 * incomplete and bad streams) and, with a search store, `/micro/good` and
 * `/micro/bad` through the HTTP API with the pages' credentials.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { call, check, expectStatus, ScenarioFailure, type ScenarioContext } from './target'
import { rawEvents, readTexts } from './streams'

const WEB_PAGE = 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0'
/** In the Iglu Central snapshot that ships with enrich: resolved without a network. */
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const PAYLOAD_DATA = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4'
const CONTEXTS = 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1'
const UNSTRUCT = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'

/** What the trackers send: per app id, the events enrich must make good, and those it must refuse. */
interface Sent {
  readonly good: Readonly<Record<string, readonly string[]>>
  readonly badApp: string
}

type NodeTracker = typeof import('@snowplow/node-tracker')

async function nodeTracker(ctx: ScenarioContext, lib: NodeTracker, appId: string, eventMethod: 'get' | 'post', bufferSize: number) {
  const url = new URL(ctx.target.apiUrl)
  const failures: string[] = []
  let delivered = 0
  let failed = 0
  const t = lib.newTracker(
    { namespace: appId, appId, encodeBase64: eventMethod === 'get' },
    {
      endpoint: url.hostname,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      protocol: url.protocol === 'https:' ? 'https' : 'http',
      eventMethod,
      bufferSize,
      retryFailedRequests: false,
      onRequestSuccess: (batch) => {
        delivered += batch.length
      },
      onRequestFailure: (f, res) => {
        failed += f.events.length
        failures.push(`${eventMethod.toUpperCase()} ${f.events.length} event(s): ${res?.status ?? f.message ?? 'no answer'}`)
      },
    },
  )
  return { t, answered: () => delivered + failed, failures }
}

/** A browser tracker's POST body: `payload_data` with `cx` (base64 contexts) and `ue_px` (base64 self-describing event). */
export function browserTrackerBody(appId: string, now: number): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const common = { tv: 'js-4.10.1', p: 'web', aid: appId, tna: 'sp', duid: randomUUID(), vid: '1', sid: randomUUID(), lang: 'en-GB', res: '1920x1080', vp: '1366x768', cs: 'UTF-8', tz: 'Europe/London', url: 'https://shop.example/checkout', stm: String(now) }
  const cx = b64({ schema: CONTEXTS, data: [{ schema: WEB_PAGE, data: { id: randomUUID() } }] })
  return JSON.stringify({
    schema: PAYLOAD_DATA,
    data: [
      { ...common, e: 'pv', eid: randomUUID(), dtm: String(now), page: 'Checkout', cx },
      { ...common, e: 'ue', eid: randomUUID(), dtm: String(now + 1), ue_px: b64({ schema: UNSTRUCT, data: { schema: LINK_CLICK, data: { targetUrl: 'https://shop.example/pay', elementId: 'pay' } } }), cx },
    ],
  })
}

async function send(ctx: ScenarioContext, run: string): Promise<Sent> {
  const lib = (await import('@snowplow/node-tracker')) as NodeTracker
  const getApp = `rehearsal-get-${run}`
  const postApp = `rehearsal-post-${run}`
  const browserApp = `rehearsal-browser-${run}`
  const get = await nodeTracker(ctx, lib, getApp, 'get', 1)
  get.t.track(lib.buildPageView({ pageUrl: 'https://shop.example/', pageTitle: 'Home' }), [{ schema: WEB_PAGE, data: { id: randomUUID() } }])
  const post = await nodeTracker(ctx, lib, postApp, 'post', 10)
  post.t.track(lib.buildPageView({ pageUrl: 'https://shop.example/cart', pageTitle: 'Cart' }))
  post.t.track(lib.buildSelfDescribingEvent({ event: { schema: LINK_CLICK, data: { targetUrl: 'https://shop.example/checkout', elementId: 'go' } } }))
  // a schema violation: link_click without its required targetUrl
  post.t.track(lib.buildSelfDescribingEvent({ event: { schema: LINK_CLICK, data: { elementId: 'no-target' } } }))
  await Promise.all([get.t.flush(), post.t.flush()])
  await ctx.until(`the collector at ${ctx.target.apiUrl} to answer the node trackers (GET /i, POST /com.snowplowanalytics.snowplow/tp2)`, async () => (get.answered() >= 1 && post.answered() >= 3 ? true : undefined))
  const failures = [...get.failures, ...post.failures]
  check(failures.length === 0, `the collector refused the node tracker: ${failures.join('; ')}`)
  const browser = await call(ctx.url('/com.snowplowanalytics.snowplow/tp2'), {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=UTF-8', origin: 'https://shop.example', referer: 'https://shop.example/checkout' },
    body: browserTrackerBody(browserApp, Date.now()),
  })
  expectStatus(browser, 200, 'POST /com.snowplowanalytics.snowplow/tp2 (browser tracker body)')
  return { good: { [getApp]: ['page_view'], [postApp]: ['page_view', 'unstruct'], [browserApp]: ['page_view', 'unstruct'] }, badApp: postApp }
}

/**
 * The pii output: a pseudonymization enrichment uploaded through the control
 * plane (user_id, SHA-256, `emitEvent`), page views with a user id sent until
 * enrich, at its next reload, pseudonymizes one (its good event's user_id is
 * the digest) and writes its pii_transformation event; then disabled again.
 */
async function piiOutput(ctx: ScenarioContext, run: string): Promise<string> {
  await ctx.signIn()
  const file = 'pii_enrichment_config.json'
  const salt = `rehearsal-salt-${run}`
  const config = {
    schema: 'iglu:com.snowplowanalytics.snowplow.enrichments/pii_enrichment_config/jsonschema/2-0-1',
    data: {
      vendor: 'com.snowplowanalytics.snowplow.enrichments', name: 'pii_enrichment_config', enabled: true, emitEvent: true, anonymousOnly: false,
      parameters: { pii: [{ pojo: { field: 'user_id' } }], strategy: { pseudonymize: { hashFunction: 'SHA-256', salt } } },
    },
  }
  const form = new FormData()
  form.append('enrichmentjson', new Blob([JSON.stringify(config)], { type: 'application/json' }), file)
  const uploaded = await call(ctx.url('/control-plane/enrichments'), { method: 'POST', headers: { authorization: ctx.auth() }, body: form })
  expectStatus(uploaded, 200, `POST /control-plane/enrichments (${file})`)
  const appId = `rehearsal-pii-${run}`
  const digests = new Map<string, string>()
  let lastSent = 0
  try {
    const { streams } = ctx.names
    const kinesis = ctx.target.clients.kinesis
    const found = await ctx.until(`a pii_transformation event of ${appId} on ${streams.pii} and its good event pseudonymized`, async () => {
      if (Date.now() - lastSent >= 1000) {
        lastSent = Date.now()
        const uid = `user-${run}-${digests.size}`
        digests.set(createHash('sha256').update(uid + salt).digest('hex'), uid)
        const sent = await call(ctx.url(`/i?e=pv&aid=${appId}&p=web&tv=node-4.8.0&uid=${uid}`))
        expectStatus(sent, 200, 'GET /i (a page view with a user id)')
      }
      const pii = (await readTexts(kinesis, streams.pii)).map((l) => l.split('\t')).filter((c) => c[0] === appId)
      if (pii.length === 0) return undefined
      const good = (await readTexts(kinesis, streams.good)).map((l) => l.split('\t')).filter((c) => c[0] === appId && digests.has(c[12] ?? ''))
      return good.length > 0 ? { pii: pii[0]!, good: good[0]! } : undefined
    })
    check(found.pii[5] === 'pii_transformation', `the pii output of ${appId} holds a ${found.pii[5]} event`)
    const uid = digests.get(found.good[12]!)!
    check(found.pii.join('\t').includes(uid), `the pii_transformation event does not name the original user id ${uid}`)
    return `pii: user_id pseudonymized (SHA-256) on good after ${digests.size} page view(s), its pii_transformation event on the pii stream`
  } finally {
    const off = await call(ctx.url(`/control-plane/enrichments/${file}/disable`), { method: 'POST', headers: { authorization: ctx.auth() } })
    expectStatus(off, 200, `POST /control-plane/enrichments/${file}/disable`)
  }
}

/** The lines of every archive object under a prefix (gzip, one record a line). */
async function archivedLines(ctx: ScenarioContext, prefix: string): Promise<string[]> {
  const s3 = ctx.target.clients.s3
  const lines: string[] = []
  let token: string | undefined
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: ctx.names.buckets.archive, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }))
    for (const o of page.Contents ?? []) {
      const body = await s3.send(new GetObjectCommand({ Bucket: ctx.names.buckets.archive, Key: o.Key! }))
      lines.push(...gunzipSync(Buffer.from(await body.Body!.transformToByteArray())).toString('utf8').split('\n').filter(Boolean))
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
  return lines
}

const sorted = (xs: readonly string[]) => [...xs].sort().join(',')

export async function trackersScenario(ctx: ScenarioContext): Promise<string> {
  const run = randomBytes(4).toString('hex')
  const sent = await send(ctx, run)
  const apps = Object.keys(sent.good)
  const { streams } = ctx.names
  const kinesis = ctx.target.clients.kinesis
  // the collector's records: every event of every tracker on the raw stream
  const expectedRaw = Object.values(sent.good).reduce((n, e) => n + e.length, 0) + 1
  await ctx.until(`${expectedRaw} events of this run on the raw stream ${streams.raw}`, async () => {
    const n = (await rawEvents(kinesis, streams.raw)).filter((e) => apps.includes(e.aid ?? '')).length
    if (n > expectedRaw) throw new ScenarioFailure(`${n} events of this run on the raw stream, ${expectedRaw} sent`)
    return n === expectedRaw ? true : undefined
  })
  const done = [`${expectedRaw} events on raw (node tracker GET and POST, browser tracker body)`]
  if (ctx.target.unavailable?.enrich) return [...done, `enrich not checked: ${ctx.target.unavailable.enrich}`].join('; ')

  // enrich's outputs: the good events per app, the schema violation on bad and incomplete
  let seen = ''
  await ctx.until(`the enriched events on ${streams.good}`, async () => {
    const rows = (await readTexts(kinesis, streams.good)).map((l) => l.split('\t')).filter((c) => apps.includes(c[0]!))
    const byApp = Object.fromEntries(apps.map((a) => [a, sorted(rows.filter((c) => c[0] === a).map((c) => c[5]!))]))
    seen = JSON.stringify(byApp)
    return apps.every((a) => byApp[a] === sorted(sent.good[a]!)) ? true : undefined
  }, () => seen)
  const badRow = await ctx.until(`the schema violation of ${sent.badApp} on ${streams.bad}`, async () => {
    const rows = (await readTexts(kinesis, streams.bad)).filter((l) => l.includes(sent.badApp))
    return rows.find((l) => l.includes('schema_violations') && l.includes('no-target'))
  })
  check(/targetUrl/.test(badRow), `the bad row does not name the missing targetUrl: ${badRow.slice(0, 300)}`)
  await ctx.until(`the failed event of ${sent.badApp} on ${streams.incomplete}`, async () => {
    const rows = (await readTexts(kinesis, streams.incomplete)).filter((l) => l.startsWith(`${sent.badApp}\t`))
    return rows.length === 1 ? true : undefined
  })
  done.push('good: 5 events on the good stream; the schema violation on the bad and incomplete streams')
  // the archive: the good stream's records, archived by its mapping after the template's batching window
  const archived = await ctx.until(`the good events of this run in the archive bucket ${ctx.names.buckets.archive} (under ${streams.good}/)`, async () => {
    const lines = await archivedLines(ctx, `${streams.good}/`)
    return lines.filter((l) => apps.includes(l.split('\t')[0]!)).length >= expectedRaw - 1 ? lines.length : undefined
  }, undefined, Math.max(ctx.waitMs, ctx.options.archiveWaitMs ?? 150_000))
  done.push(`archived (${archived} lines of the good stream in the archive)`)
  done.push(await piiOutput(ctx, run))
  if (ctx.target.unavailable?.searchStore) return [...done, `/micro not checked: ${ctx.target.unavailable.searchStore}`].join('; ')

  // the search store, through the HTTP API as Micro's clients read it
  await ctx.signIn()
  let micro = ''
  await ctx.until('the events of this run in /micro/good', async () => {
    const r = await call(ctx.url('/micro/good'), { method: 'POST', headers: { authorization: ctx.auth(), 'content-type': 'application/json' }, body: '{"limit":1000}' })
    expectStatus(r, 200, 'POST /micro/good')
    const events = r.json<{ event: { app_id?: string; event?: string } }[]>().filter((e) => apps.includes(e.event.app_id ?? ''))
    micro = `${events.length} events`
    return events.length === expectedRaw - 1 ? true : undefined
  }, () => micro)
  await ctx.until('the schema violation in /micro/bad', async () => {
    const r = await call(ctx.url('/micro/bad'), { headers: { authorization: ctx.auth() } })
    expectStatus(r, 200, 'GET /micro/bad')
    return r.text.includes(sent.badApp) ? true : undefined
  })
  const all = await call(ctx.url('/micro/all'), { headers: { authorization: ctx.auth() } })
  expectStatus(all, 200, 'GET /micro/all')
  done.push('/micro/good and /micro/bad have them')
  return done.join('; ')
}
