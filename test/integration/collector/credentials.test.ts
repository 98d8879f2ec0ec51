/**
 * A browser resends the pages' basic credentials with every request to the
 * same origin, tracker requests to the collector included: the credentials
 * must never reach the raw stream, the archive, a bad row or the search store.
 */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3'
import { gunzipSync } from 'node:zlib'
import { beforeAll, describe, expect, it } from 'vitest'
import { basicAuth, testClients, useLocalStack, withAuth } from '../../support/stack'
import { readPayloads, readTexts } from '../../support/streams'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

const TP2 = 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4'
const LINK_CLICK = 'iglu:com.snowplowanalytics.snowplow/link_click/jsonschema/1-0-1'
const MARKER = 'credentials-never-stored'
const AUTH = basicAuth()
const SECRET = AUTH.slice('Basic '.length)
const API_KEY = '6a0e1f7c-1b2d-4e3f-8a9b-0c1d2e3f4a5b'

/** Whether a text holds any of the credentials sent (or the header's name). */
const leaks = (text: string) => [SECRET, API_KEY, 'TestPassword2024'].some((s) => text.includes(s)) || /authorization/i.test(text)

beforeAll(async () => {
  // link_click without its required targetUrl: a failed event and a schema_violations bad row
  const ue = { schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: LINK_CLICK, data: { elementId: MARKER } } }
  const body = JSON.stringify({ schema: TP2, data: [{ e: 'ue', p: 'web', tv: 'js-4.0.0', aid: MARKER, ue_pr: JSON.stringify(ue) }] })
  const res = await fetch(`${stack.current.url}/com.snowplowanalytics.snowplow/tp2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=UTF-8', authorization: AUTH, 'proxy-authorization': AUTH, apikey: API_KEY, origin: stack.current.url },
    body,
  })
  expect(res.status).toBe(200)
  await stack.current.drain() // enrich and the archive of raw
  await stack.current.drain() // the loaders and the archive of what enrich wrote
}, 120_000)

describe('a tracker request sent with the basic credentials of the pages', () => {
  it('is on the raw stream without them', async () => {
    const payloads = (await readPayloads(testClients().kinesis, stack.current.names.streams.raw)).filter((p) => p.body?.includes(MARKER))
    expect(payloads).toHaveLength(1)
    expect(payloads[0]!.headers).toEqual(expect.arrayContaining([`Origin: ${stack.current.url}`]))
    expect(payloads[0]!.headers!.filter((h) => leaks(h))).toEqual([])
  })

  it('is a bad row on the bad stream and in the search store without them', async () => {
    const rows = (await readTexts(testClients().kinesis, stack.current.names.streams.bad)).filter((t) => t.includes(MARKER))
    expect(rows.length).toBeGreaterThan(0)
    for (const r of rows) expect(leaks(r), r).toBe(false)
    const res = await fetch(`${stack.current.url}/search-store/bad/_search?q=${encodeURIComponent(`"${MARKER}"`)}`, { headers: withAuth() })
    const text = await res.text()
    expect(res.status, text).toBe(200)
    expect(JSON.parse(text).hits.total.value).toBeGreaterThan(0)
    expect(text).toContain(MARKER)
    expect(leaks(text)).toBe(false)
    // the failed event is kept apart from the good ones; /micro/events shows it
    const failed = await fetch(`${stack.current.url}/micro/events`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json' }), body: JSON.stringify({ filters: [{ column: 'app_id', values: [MARKER] }] }) })
    const failedText = await failed.text()
    expect(failed.status, failedText).toBe(200)
    expect(JSON.parse(failedText).totalItems).toBe(1)
    expect(leaks(failedText)).toBe(false)
  })

  it('is in the archive without them', async () => {
    const s3 = testClients().s3
    const bucket = stack.current.names.buckets.archive
    const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((o) => o.Key!).filter((k) => /^[^/]+\/\d{4}\//.test(k))
    let seen = 0
    for (const key of keys) {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      const lines = gunzipSync(Buffer.from(await object.Body!.transformToByteArray())).toString('utf8').split('\n').filter(Boolean)
      for (const line of lines) {
        const text = key.startsWith(`${stack.current.names.streams.raw}/`) ? Buffer.from(line, 'base64').toString('latin1') : line
        if (!text.includes(MARKER)) continue
        seen++
        expect(leaks(text), key).toBe(false)
      }
    }
    expect(seen).toBeGreaterThan(0)
  })
})
