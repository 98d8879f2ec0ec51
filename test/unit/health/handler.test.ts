/**
 * The health function on AWS: a deployment without the licence takes events
 * (they wait in the raw stream), so /health answers 200 listing enrich as off
 * on purpose; a component marked down is a fault (503).
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { handler } from '../../../functions/health/handler'
import { ENRICH_OFF_ENV } from '../../../lib/core/health/report'
import { markDown, markUp } from '../../../lib/runtime/dependencies'

const event = {
  version: '2.0', routeKey: 'GET /health', rawPath: '/health', rawQueryString: '', headers: {}, isBase64Encoded: false,
  requestContext: { http: { method: 'GET', path: '/health', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' }, timeEpoch: 0 },
} as unknown as APIGatewayProxyEventV2

const health = async () => (await (handler as unknown as (e: unknown, c: unknown) => Promise<APIGatewayProxyStructuredResultV2>)(event, {})) as APIGatewayProxyStructuredResultV2

afterEach(() => {
  delete process.env[ENRICH_OFF_ENV]
  markUp('test-dependency')
})

describe('the health function', () => {
  it('answers 200 in a deployment without the licence, listing enrich as off on purpose', async () => {
    process.env[ENRICH_OFF_ENV] = 'licence'
    const res = await health()
    expect(res.statusCode).toBe(200)
    expect(res.body).toMatch(/^ok\nenrich-raw is off on purpose since \S+: enrich is off until the licence is accepted/)
  })

  it('answers 503 for a fault, with the deliberate states after it', async () => {
    process.env[ENRICH_OFF_ENV] = 'licence'
    markDown('test-dependency', 'it does not answer')
    const res = await health()
    expect(res.statusCode).toBe(503)
    expect(res.body!.split('\n').slice(0, 3)).toEqual(['unavailable', expect.stringMatching(/^test-dependency is down since \S+: it does not answer$/), expect.stringMatching(/^enrich-raw is off on purpose/)])
  })
})
