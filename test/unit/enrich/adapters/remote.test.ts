import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adapt } from '../../../../lib/core/enrich/adapters'
import { remoteAdapters } from '../../../../lib/core/enrich/adapters/remote'
import { validateConfig } from '../../../../lib/core/enrich/config'
import type { LoadedPayload } from '../../../../lib/core/enrich/payload'
import { resolver } from '../helpers'
import { failures, webhookPayload } from './helpers'

const UE = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0'
const MOOD = 'iglu:org.remoteEnricherTest/moodChange/jsonschema/1-0-0'

/** A remote adapter as a test server: one moodChange event per element of the posted body's array. */
function handle(body: string): { status: number; text: string } {
  const req = JSON.parse(body) as { queryString: Record<string, string>; headers: string[]; body: string | null; contentType: string | null }
  const items = JSON.parse(req.body ?? 'null') as unknown
  if (!Array.isArray(items)) return { status: 500, text: '"server error"' }
  const events = items.map((item) => ({
    tv: 'testTracker-v0.1',
    e: 'ue',
    p: req.queryString.p ?? 'srv',
    ue_pr: JSON.stringify({ schema: UE, data: { schema: MOOD, data: item } }),
    ...req.queryString,
  }))
  return { status: 200, text: JSON.stringify({ events }) }
}

let server: Server
let base = ''
const seen: unknown[] = []
/** Fixed answers by path. */
const FIXED: Record<string, string> = {
  '/invalid': '{invalid json',
  '/not-a-list': '{"events":"response"}',
  '/empty': '{"error":"", "events":[]}',
  '/not-strings': '{"events":[{"e":1}]}',
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString('utf8')))
    req.on('end', () => {
      seen.push({ method: req.method, contentType: req.headers['content-type'], body: JSON.parse(body) })
      if (req.url === '/slow') return void setTimeout(() => res.end('{"events":[]}'), 2000)
      const fixed = FIXED[req.url ?? '']
      if (fixed !== undefined) return void res.end(fixed)
      const r = handle(body)
      res.statusCode = r.status
      res.end(r.text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const payload = (body: string | null, qs: [string, string][] = []): LoadedPayload => ({ ...webhookPayload('org.remoteEnricherTest', 'v1', { body, qs }), headers: ['testHeader: testValue'] })
const run = (p: LoadedPayload, path = '/adapter', timeoutMs = 5000) =>
  adapt(p, { resolver, maxJsonDepth: 40, remoteAdapters: remoteAdapters([{ vendor: 'org.remoteEnricherTest', version: 'v1', url: `${base}${path}`, timeoutMs }]) })

describe('remote adapters', () => {
  it('posts the payload and takes the events the service returns', async () => {
    seen.length = 0
    const r = await run(payload('[{"anonymous":-0.3},{"subscribers":0.6}]'))
    if (!r.ok) throw new Error(JSON.stringify(r.messages))
    expect(r.events.map((e) => Object.fromEntries(e.parameters))).toEqual([
      { tv: 'testTracker-v0.1', e: 'ue', p: 'srv', ue_pr: `{"schema":"${UE}","data":{"schema":"${MOOD}","data":{"anonymous":-0.3}}}` },
      { tv: 'testTracker-v0.1', e: 'ue', p: 'srv', ue_pr: `{"schema":"${UE}","data":{"schema":"${MOOD}","data":{"subscribers":0.6}}}` },
    ])
    expect(seen).toEqual([
      { method: 'POST', contentType: 'application/json', body: { contentType: null, queryString: {}, headers: ['testHeader: testValue'], body: '[{"anonymous":-0.3},{"subscribers":0.6}]' } },
    ])
  })

  it('passes every query string parameter on, __proto__ included', async () => {
    seen.length = 0
    const r = await run(payload('[{"a":1}]', [['p', 'mob'], ['__proto__', 'x'], ['aid', 'app']]))
    expect(r.ok && Object.fromEntries(r.events[0]!.parameters)).toMatchObject({ p: 'mob', aid: 'app' })
    expect((seen[0] as any).body.queryString).toEqual(JSON.parse('{"p":"mob","__proto__":"x","aid":"app"}'))
  })

  it('refuses an empty or missing body without calling the service', async () => {
    for (const body of ['', null]) {
      expect(failures(await run(payload(body)))).toEqual([{ field: 'body', value: null, expectation: `empty body: not a valid remote adapter ${base}/adapter payload` }])
    }
  })

  it('reports an error status, an answer that is not JSON, not a list of string maps, or an empty list', async () => {
    expect(failures(await run(payload('{"not":"a list"}')))).toEqual([
      { field: 'body', value: null, expectation: `[REMOTE_ADAPTER] could not get response from remote adapter ${base}/adapter: Request failed with status 500` },
    ])
    const [notJson] = failures(await run(payload('[1]'), '/invalid')) as any[]
    expect(notJson).toMatchObject({ field: 'body', value: '{invalid json' })
    expect(notJson.error).toMatch(/^\[REMOTE_ADAPTER\] invalid json: /)
    expect(failures(await run(payload('[1]'), '/not-a-list'))).toEqual([
      {
        field: 'body',
        value: '{"events":"response"}',
        expectation: `[REMOTE_ADAPTER] could not be decoded as a list of json objects: DecodingFailure at .events: Got value '"response"' with wrong type, expecting array`,
      },
    ])
    expect(failures(await run(payload('[1]'), '/not-strings'))).toEqual([
      { field: 'body', value: '{"events":[{"e":1}]}', expectation: `[REMOTE_ADAPTER] could not be decoded as a list of json objects: DecodingFailure at .events[0].e: Got value '1' with wrong type, expecting string` },
    ])
    expect(failures(await run(payload('[1]'), '/empty'))).toEqual([{ field: 'body', value: '{"error":"", "events":[]}', expectation: '[REMOTE_ADAPTER] empty list of events' }])
  })

  it('gives up on a service that does not answer in time, and on one that is not there', async () => {
    expect(failures(await run(payload('[1]'), '/slow', 200))).toEqual([
      { field: 'body', value: null, expectation: `[REMOTE_ADAPTER] could not get response from remote adapter ${base}/slow: no response within 200 ms` },
    ])
    // a port that was just free
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    const port = (probe.address() as AddressInfo).port
    await new Promise((resolve) => probe.close(resolve))
    const url = `http://127.0.0.1:${port}/x`
    const closed = await adapt(payload('[1]'), { resolver, maxJsonDepth: 40, remoteAdapters: remoteAdapters([{ vendor: 'org.remoteEnricherTest', version: 'v1', url, timeoutMs: 1000 }]) })
    expect((failures(closed)[0] as any).expectation).toBe(`[REMOTE_ADAPTER] could not get response from remote adapter ${url}: connect ECONNREFUSED 127.0.0.1:${port}`)
  })

  it('is configured by enrich config remoteAdapters', () => {
    const base = { license: { accept: true }, input: { streamName: 'raw' }, output: { good: { streamName: 'good' }, bad: { streamName: 'bad' }, incomplete: { streamName: 'failed' } } }
    const ok = validateConfig({ ...base, remoteAdapters: { connectionTimeout: '1 second', readTimeout: '2 seconds', configs: [{ vendor: 'com.example', version: 'v1', url: 'https://adapter.example.com/v1' }, { vendor: 'com.example', version: 'v2', url: 'http://x', timeout: '500 millis' }] } })
    if (!ok.ok) throw new Error(ok.errors.join('\n'))
    expect(ok.config.remoteAdapters).toEqual({
      timeoutMs: 3000,
      configs: [
        { vendor: 'com.example', version: 'v1', url: 'https://adapter.example.com/v1', timeoutMs: 3000 },
        { vendor: 'com.example', version: 'v2', url: 'http://x', timeoutMs: 500 },
      ],
    })
    const bad = validateConfig({ ...base, remoteAdapters: { configs: [{ vendor: 'com.mailgun', version: 'v1', url: 'https://x' }, { vendor: 'a/b', version: 'v1', url: 'ftp://x', extra: 1 }] } })
    expect(bad.ok).toBe(false)
    expect(!bad.ok && bad.errors).toEqual([
      'remoteAdapters.configs[0]: com.mailgun/v1 is served by a built-in adapter; a remote adapter needs another vendor/version',
      'remoteAdapters.configs[1].extra: unknown key (expected vendor, version, url, timeout)',
      'remoteAdapters.configs[1].vendor: must be the first segment of the collector path (no "/" or spaces), got "a/b"',
      'remoteAdapters.configs[1].url: must be an http:// or https:// URL, got "ftp://x"',
    ])
  })
})
