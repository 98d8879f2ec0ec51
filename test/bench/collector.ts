/**
 * Collector throughput through the local gateway (API Gateway v2 event → the
 * collector handler → PutRecords to Kinesis) against a bare Node HTTP server
 * that only reads the body and answers 200, measured in the same run with the
 * same client: a typical tracker POST (a batch of 10 browser events with
 * base64 contexts, ~9 kB), a bounded number of requests over loopback with
 * keep-alive. The load client runs in its own process, and so do the
 * emulators (as the AWS services are elsewhere); a second collector line shows
 * the `npm start` layout, with the emulators in the gateway's process.
 *
 *   npm run bench -- collector        (or: node --import tsx test/bench/collector.ts [requests] [concurrency])
 */
import { createServer } from 'node:http'
import os from 'node:os'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { startLocalStack } from '../../lib/local/stack'
import { makeClients } from '../../lib/aws/clients'
import { DescribeStreamSummaryCommand } from '@aws-sdk/client-kinesis'
import { DEFAULT_COLLECTOR_CONFIG } from '../../lib/core/collector/config'
import { handleCollectorRequest } from '../../lib/core/collector/service'
import type { HttpRequest } from '../../lib/http/types'
import { decodeCollectorPayload, encodeCollectorPayload } from '../../lib/core/thrift/collector-payload'
import type { CollectorPayload } from '../../lib/core/thrift/types'
import { referenceDecode, referenceEncode } from '../unit/collector/thrift-reference'
import { cpuMsOf, emulatorsProcess, loadFromOtherProcess, nullKinesisProcess, runMain } from './support/processes'

/** Decodes and encodes per second of one raw record: the hand-written codec vs the thrift package's TBinaryProtocol. */
function codecRates(record: Buffer, n: number): { hand: number; pkg: number; handEncode: number; pkgEncode: number } {
  const rate = (f: () => unknown) => {
    for (let i = 0; i < 2000; i++) f()
    const started = process.hrtime.bigint()
    for (let i = 0; i < n; i++) f()
    return n / (Number(process.hrtime.bigint() - started) / 1e9)
  }
  const decoded = decodeCollectorPayload(record)
  if (!decoded.ok) throw new Error(decoded.error)
  const payload = decoded.payload as CollectorPayload
  return {
    hand: rate(() => decodeCollectorPayload(record)),
    pkg: rate(() => referenceDecode(record)),
    handEncode: rate(() => encodeCollectorPayload(payload)),
    pkgEncode: rate(() => referenceEncode(payload)),
  }
}

/** The pure request → outcome function alone (no HTTP, no Kinesis), to show where the time goes. */
function coreOnly(body: string, n: number): { rate: number; record: Buffer } {
  const req: HttpRequest = {
    method: 'POST',
    path: PATH,
    headers: { host: '127.0.0.1:8080', 'content-type': HEADERS['content-type'], origin: HEADERS.origin, 'user-agent': HEADERS['user-agent'], referer: HEADERS.referer },
    query: {},
    rawQuery: '',
    cookies: [HEADERS.cookie],
    body: Buffer.from(body),
    sourceIp: '127.0.0.1',
    params: {},
    timeEpochMs: Date.now(),
  }
  for (let i = 0; i < 1000; i++) handleCollectorRequest(req, DEFAULT_COLLECTOR_CONFIG, Date.now(), randomUUID)
  const started = process.hrtime.bigint()
  for (let i = 0; i < n; i++) handleCollectorRequest(req, DEFAULT_COLLECTOR_CONFIG, Date.now(), randomUUID)
  const rate = n / (Number(process.hrtime.bigint() - started) / 1e9)
  return { rate, record: handleCollectorRequest(req, DEFAULT_COLLECTOR_CONFIG, Date.now(), randomUUID).records[0]!.data }
}

const REQUESTS = Number(process.argv[2] ?? 3000)
const CONCURRENCY = Number(process.argv[3] ?? 16)
const WARMUP = 300
const PATH = '/com.snowplowanalytics.snowplow/tp2'

function typicalBatch(): string {
  const now = Date.now()
  const data = Array.from({ length: 10 }, (_, i) => ({
    e: i % 2 ? 'ue' : 'pv',
    url: `https://shop.example.com/products/${i}?utm_source=newsletter`,
    page: `Product ${i} – Example Shop`,
    refr: 'https://www.google.com/',
    eid: randomUUID(),
    tv: 'js-4.10.1',
    tna: 'sp',
    aid: 'shop',
    p: 'web',
    cookie: '1',
    cs: 'UTF-8',
    lang: 'en-GB',
    res: '1920x1080',
    cd: '24',
    tz: 'Europe/London',
    dtm: String(now - 100),
    vp: '1280x720',
    ds: '1280x3000',
    vid: '3',
    sid: randomUUID(),
    duid: randomUUID(),
    stm: String(now),
    ...(i % 2 ? { ue_px: Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema: 'iglu:com.acme/add_to_cart/jsonschema/1-0-0', data: { sku: `SKU-${i}`, quantity: 1 } } })).toString('base64url') } : {}),
    cx: Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: randomUUID() } }] })).toString('base64url'),
  }))
  return JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data })
}

const HEADERS = {
  'content-type': 'application/json; charset=UTF-8',
  origin: 'https://shop.example.com',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  referer: 'https://shop.example.com/products/1',
  cookie: 'sp=c5f3a09f-75f8-4309-bec5-fea560f78455',
}

async function load(baseUrl: string, body: string, total: number, method = 'POST'): Promise<{ seconds: number; statuses: Map<number, number>; p50Ms: number; p99Ms: number; cpuMs: number }> {
  const r = await loadFromOtherProcess({ url: new URL(PATH, baseUrl).href, method, headers: HEADERS, body, total, concurrency: CONCURRENCY })
  return { ...r, statuses: new Map(Object.entries(r.statuses).map(([k, v]) => [Number(k), v])) }
}

function bareServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=UTF-8', 'content-length': '2' })
      res.end('ok')
    })
  })
  server.keepAliveTimeout = 65_000
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((r) => {
          server.close(() => r())
          server.closeAllConnections()
        }),
      }),
    ),
  )
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

async function main() {
  const body = typicalBatch()
  console.log(`payload: ${Buffer.byteLength(body)} bytes, 10 events; ${REQUESTS} requests, concurrency ${CONCURRENCY}, loopback, keep-alive`)

  const bare = await bareServer()
  await load(bare.url, body, WARMUP)
  const base = await load(bare.url, body, REQUESTS)
  await bare.close()

  const emulators = await emulatorsProcess()
  const stack = await startLocalStack({ triggers: false, endpoints: emulators.endpoints, namePrefix: `bench${process.pid}` })
  try {
    await load(stack.url, body, WARMUP)
    const own0 = process.cpuUsage()
    const emu0 = cpuMsOf(emulators.pid)
    const coll = await load(stack.url, body, REQUESTS)
    const own = process.cpuUsage(own0)
    const emuMs = cpuMsOf(emulators.pid) - emu0
    const ok = coll.statuses.get(200) ?? 0
    if (ok !== REQUESTS) throw new Error(`collector answered ${JSON.stringify([...coll.statuses])}; expected ${REQUESTS} × 200`)

    // Same gateway and handler, no stream write: an OPTIONS preflight with the same body and headers.
    const noWrite = await load(stack.url, body, REQUESTS, 'OPTIONS')

    const kinesis = makeClients(stack.endpoints).kinesis
    const summary = await kinesis.send(new DescribeStreamSummaryCommand({ StreamName: stack.names.streams.raw }))
    const baseRps = REQUESTS / base.seconds
    const collRps = REQUESTS / coll.seconds
    const ms = (r: { p50Ms: number; p99Ms: number }) => `p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms`
    console.log(`bare Node http server       ${fmt(baseRps).padStart(7)} req/s  (${base.seconds.toFixed(2)} s, ${ms(base)})`)
    console.log(`collector via local gateway ${fmt(collRps).padStart(7)} req/s  (${coll.seconds.toFixed(2)} s, ${ms(coll)}, ${fmt(collRps * 10)} events/s, raw stream ${summary.StreamDescriptionSummary?.OpenShardCount} shards)`)
    console.log(`ratio collector / bare      ${(collRps / baseRps).toFixed(3)}`)
    const perReq = (ms: number) => `${Math.round((ms * 1000) / REQUESTS)} µs`
    console.log(`CPU per request             load client ${perReq(coll.cpuMs)}, gateway + collector ${perReq((own.user + own.system) / 1000)}, emulators ${perReq(emuMs)} (bare run: client ${perReq(base.cpuMs)}); ${os.cpus().length} cores`)
    console.log(`gateway + handler, no write ${fmt(REQUESTS / noWrite.seconds).padStart(7)} req/s  (OPTIONS through the same path: the Kinesis write's share is the rest)`)
    const core = coreOnly(body, 20_000)
    console.log(`collector core alone        ${fmt(core.rate).padStart(7)} req/s  (request → response and Thrift records, no I/O)`)
    const dec = codecRates(core.record, 50_000)
    console.log(`Thrift decode, ${core.record.length}-byte record: hand-written ${fmt(dec.hand)}/s, thrift package ${fmt(dec.pkg)}/s (${(dec.hand / dec.pkg).toFixed(1)}x)`)
    console.log(`Thrift encode, same record: hand-written ${fmt(dec.handEncode)}/s, thrift package ${fmt(dec.pkgEncode)}/s (${(dec.handEncode / dec.pkgEncode).toFixed(1)}x)`)
  } finally {
    await stack.stop()
    await emulators.stop()
  }

  // The collector alone: the same path, writing to a Kinesis endpoint that stores nothing.
  const emulators2 = await emulatorsProcess()
  const nullKinesis = await nullKinesisProcess()
  const bare2 = await startLocalStack({ triggers: false, endpoints: { ...emulators2.endpoints, kinesis: nullKinesis.url }, namePrefix: `benchnull${process.pid}` })
  try {
    await load(bare2.url, body, WARMUP)
    const r = await load(bare2.url, body, REQUESTS)
    if ((r.statuses.get(200) ?? 0) !== REQUESTS) throw new Error(`collector answered ${JSON.stringify([...r.statuses])}`)
    const rps = REQUESTS / r.seconds
    console.log(`collector, Kinesis that stores nothing ${fmt(rps).padStart(7)} req/s, ratio ${(rps / (REQUESTS / base.seconds)).toFixed(3)}  (gateway + handler + Thrift + SDK PutRecords; the rest of the gap above is the Kinesis emulator)`)
  } finally {
    await bare2.stop()
    await nullKinesis.stop()
    await emulators2.stop()
  }

  // The npm start layout: emulators in the gateway's own process.
  const local = await startLocalStack({ triggers: false, namePrefix: `benchlocal${process.pid}` })
  try {
    await load(local.url, body, WARMUP)
    const r = await load(local.url, body, REQUESTS)
    console.log(`collector, emulators in the gateway's process (npm start) ${fmt(REQUESTS / r.seconds)} req/s, ratio ${(REQUESTS / r.seconds / (REQUESTS / base.seconds)).toFixed(3)}`)
  } finally {
    await local.stop()
  }
}

runMain(main)
