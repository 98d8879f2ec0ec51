/**
 * The collector's Lambda handler through each ingress's event shape: an API Gateway
 * HTTP API (payload 2.0), a Lambda function URL (same payload, its own request
 * context) and an Application Load Balancer target (multi-value headers). The same
 * request must give the same answer (status, headers, cookies, body) and the same
 * raw record in every case.
 */
import type { ALBEvent, ALBResult, APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { describe, expect, it } from 'vitest'
import { collectorHttpHandler, type RecordSink } from '../../../functions/collector/app'
import { DEFAULT_COLLECTOR_CONFIG } from '../../../lib/core/collector/config'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { fromAlb, isAlbEvent, toAlb } from '../../../lib/http/alb'
import { httpLambda } from '../../../lib/aws/lambda'

interface Plain {
  method: string
  path: string
  /** Undecoded, as on the wire. */
  query: [string, string][]
  headers: [string, string][]
  cookies: string[]
  body?: string
  ip: string
}

const time = 1_750_000_000_000

function apiGateway(r: Plain): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {}
  for (const [k, v] of r.headers) headers[k] = headers[k] ? `${headers[k]},${v}` : v
  // Like the load balancer, API Gateway and function URLs hand the client address on in X-Forwarded-For.
  headers['x-forwarded-for'] = r.ip
  return {
    version: '2.0', routeKey: '$default', rawPath: r.path, rawQueryString: r.query.map(([k, v]) => `${k}=${v}`).join('&'), cookies: r.cookies, headers,
    requestContext: { accountId: '123456789012', apiId: 'abc', domainName: 'c.example.com', domainPrefix: 'c', requestId: 'id', routeKey: '$default', stage: '$default', time: '', timeEpoch: time, http: { method: r.method, path: r.path, protocol: 'HTTP/1.1', sourceIp: r.ip, userAgent: headers['user-agent'] ?? '' } },
    body: r.body, isBase64Encoded: false,
  }
}

function functionUrl(r: Plain): APIGatewayProxyEventV2 {
  const e = apiGateway(r)
  // A function URL's request context names the URL, and its route key is always $default.
  return { ...e, requestContext: { ...e.requestContext, apiId: 'urlid', domainName: 'urlid.lambda-url.us-east-1.on.aws', domainPrefix: 'urlid', stage: '$default' } }
}

function alb(r: Plain): ALBEvent {
  const multiValueHeaders: Record<string, string[]> = {}
  for (const [k, v] of r.headers) (multiValueHeaders[k] ??= []).push(v)
  if (r.cookies.length > 0) multiValueHeaders.cookie = [r.cookies.join('; ')]
  multiValueHeaders['x-forwarded-for'] = [r.ip]
  const multiValueQueryStringParameters: Record<string, string[]> = {}
  for (const [k, v] of r.query) (multiValueQueryStringParameters[k] ??= []).push(v)
  return { requestContext: { elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/c/1' } }, httpMethod: r.method, path: r.path, multiValueQueryStringParameters, multiValueHeaders, body: r.body ?? '', isBase64Encoded: false }
}

/** An answer of either shape, as one comparable value. */
function normal(res: APIGatewayProxyStructuredResultV2 | ALBResult) {
  const headers: Record<string, string> = {}
  let cookies: string[] = []
  if ('multiValueHeaders' in res && res.multiValueHeaders) {
    for (const [k, vs] of Object.entries(res.multiValueHeaders)) {
      if (k === 'set-cookie') cookies = vs.map(String)
      else headers[k] = vs.join(',')
    }
  } else {
    for (const [k, v] of Object.entries(res.headers ?? {})) headers[k] = String(v)
    cookies = (res as APIGatewayProxyStructuredResultV2).cookies ?? []
  }
  return { statusCode: res.statusCode, headers, cookies, body: res.body, isBase64Encoded: res.isBase64Encoded }
}

async function through(shape: 'apigateway' | 'function-url' | 'alb', r: Plain) {
  const written: Buffer[] = []
  const sink: RecordSink = async (records) => void written.push(...records.filter((x) => x.stream === 'raw').map((x) => Buffer.from(x.data)))
  // One instant for every shape: the cookie's Expires and the record's timestamp come from this clock, never from the wall clock.
  const handler = httpLambda(collectorHttpHandler(sink, () => DEFAULT_COLLECTOR_CONFIG, () => time))
  const event = shape === 'alb' ? alb(r) : shape === 'function-url' ? functionUrl(r) : apiGateway(r)
  const res = (await handler(event as never, {} as never)) as APIGatewayProxyStructuredResultV2 | ALBResult
  const records = written.map((b) => {
    const d = decodeCollectorPayload(b)
    if (!d.ok) throw new Error('undecodable record')
    return d.payload
  })
  // Network user ids and event ids are drawn at random: compared as placeholders.
  const same = <T>(v: T): T => JSON.parse(JSON.stringify(v).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')) as T
  return { answer: same(normal(res)), records: same(records), res }
}

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'
const requests: Record<string, Plain> = {
  'GET pixel with a cookie and an encoded query': {
    method: 'GET', path: '/i', query: [['e', 'pv'], ['url', 'https%3A%2F%2Fshop.example.com%2F%3Fa%3D1'], ['tv', 'js-4.10.1']],
    headers: [['user-agent', UA], ['referer', 'https://shop.example.com/'], ['accept', 'image/*'], ['accept', 'text/html']], cookies: ['sp=c5f3a09f-75f8-4309-bec5-fea560f78455', 'other=1'], ip: '203.0.113.7',
  },
  'POST tp2 without a cookie': {
    method: 'POST', path: '/com.snowplowanalytics.snowplow/tp2', query: [],
    headers: [['user-agent', UA], ['content-type', 'application/json; charset=UTF-8'], ['origin', 'https://shop.example.com']], cookies: [], ip: '198.51.100.4',
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [{ e: 'pv', tv: 'js-4.10.1', p: 'web' }, { e: 'se', tv: 'js-4.10.1', p: 'web', se_ca: 'c', se_ac: 'a' }] }),
  },
  'OPTIONS preflight': { method: 'OPTIONS', path: '/com.snowplowanalytics.snowplow/tp2', query: [], headers: [['origin', 'https://shop.example.com'], ['access-control-request-method', 'POST']], cookies: [], ip: '198.51.100.4' },
  'GET health': { method: 'GET', path: '/health', query: [], headers: [], cookies: [], ip: '198.51.100.4' },
}

describe('the collector through each ingress', () => {
  for (const [name, r] of Object.entries(requests)) {
    it(`${name}: the same answer and the same record`, async () => {
      const api = await through('apigateway', r)
      const url = await through('function-url', r)
      const lb = await through('alb', r)
      expect(url.answer).toEqual(api.answer)
      expect(lb.answer).toEqual(api.answer)
      expect(url.records).toEqual(api.records)
      expect(lb.records).toEqual(api.records)
      expect('statusDescription' in lb.res && lb.res.statusDescription).toMatch(/^\d{3} /)
    })
  }

  it('sets the network user id cookie in every shape, one Set-Cookie per cookie on the ALB', async () => {
    const r = requests['POST tp2 without a cookie']!
    const api = await through('apigateway', r)
    expect(api.answer.statusCode).toBe(200)
    expect(api.answer.cookies.length).toBeGreaterThan(0)
    expect(api.answer.cookies[0]).toMatch(/^sp=<uuid>; Expires=/)
    expect(api.records).toHaveLength(1)
    expect(api.records[0]!.timestamp).toBe(time)
    const lb = await through('alb', r)
    expect((lb.res as ALBResult).multiValueHeaders?.['set-cookie']).toHaveLength(api.answer.cookies.length)
  })
})

describe('fromAlb', () => {
  it('reads single-value events too, takes the address the load balancer appended, and keeps the query undecoded', () => {
    const req = fromAlb({
      requestContext: { elb: { targetGroupArn: 'arn' } }, httpMethod: 'get', path: '/i', body: 'aGk=', isBase64Encoded: true,
      queryStringParameters: { e: 'pv', url: 'a%20b', flag: '' }, headers: { 'User-Agent': 'x', cookie: 'a=1; b=2', 'x-forwarded-for': '1.1.1.1, 2.2.2.2' },
    })
    expect(req).toMatchObject({ method: 'GET', rawQuery: 'e=pv&url=a%20b&flag', query: { e: 'pv', url: 'a b', flag: '' }, cookies: ['a=1', 'b=2'], sourceIp: '2.2.2.2', headers: { 'user-agent': 'x' } })
    expect(req.headers.cookie).toBeUndefined()
    expect(req.body.toString()).toBe('hi')
    expect(isAlbEvent({ requestContext: { http: {} } })).toBe(false)
  })

  it('answers binary bodies base64-encoded', () => {
    expect(toAlb({ statusCode: 200, headers: { 'content-type': 'image/gif' }, body: Buffer.from('GIF') })).toEqual({
      statusCode: 200, statusDescription: '200 OK', multiValueHeaders: { 'content-type': ['image/gif'] }, body: Buffer.from('GIF').toString('base64'), isBase64Encoded: true,
    })
  })
})
