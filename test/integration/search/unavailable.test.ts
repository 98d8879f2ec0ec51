/**
 * A search store that cannot answer (PostgreSQL refusing connections locally,
 * Aurora resuming from a pause on AWS) is a 503 with Retry-After from the
 * search function, never a 500; the next request tries again.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda'
import { freePort } from '../../../lib/local/emulators'
import { describe, expect, it } from 'vitest'
import { rdsDataClient } from '../../../lib/aws/rds-data'
import { searchApi } from '../../../lib/core/search/api'
import { migrate, searchDb, type SearchDb } from '../../../lib/core/search/store'
import { httpLambda } from '../../../lib/aws/lambda'
import { postgresClient } from '../../../lib/runtime/postgres'
import { DATA_API_TARGET, useRdsDataApi } from '../../support/rds-data-server'

const event = (path: string): APIGatewayProxyEventV2 =>
  ({
    version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: '', headers: {}, isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' }, timeEpoch: Date.now(), requestId: 'r', routeKey: '$default', stage: '$default' },
  }) as unknown as APIGatewayProxyEventV2

const handlerOver = (db: () => Promise<SearchDb>) =>
  httpLambda(searchApi({ db, version: 'test', lookupSchema: async () => ({ ok: false, errors: [] }) })) as unknown as (e: APIGatewayProxyEventV2) => Promise<{ statusCode: number; headers?: Record<string, string>; body?: string }>

const api = useRdsDataApi()

describe('the search function when the store cannot answer', () => {
  it('PostgreSQL refusing connections: 503 with Retry-After on every route', async () => {
    const sql = postgresClient(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`)
    const handler = handlerOver(async () => searchDb(sql))
    for (const path of ['/search-store', '/search-store/good/_count', '/micro/all']) {
      const r = await handler(event(path))
      expect(r.statusCode, path).toBe(503)
      expect(r.headers?.['retry-after']).toBe('5')
      expect(JSON.parse(r.body!).message).toMatch(/unavailable.*ECONNREFUSED/)
    }
    await sql.close()
  })

  it('Aurora resuming from a pause: 503 while it resumes, 200 once it has', async () => {
    const db = searchDb(rdsDataClient(DATA_API_TARGET, api.current.client, { resumeWaitMs: 0 }), 'paused')
    await migrate(db)
    const handler = handlerOver(async () => db)
    api.current.server.resumeFor(1)
    const during = await handler(event('/search-store/good/_count'))
    expect(during.statusCode).toBe(503)
    expect(JSON.parse(during.body!).message).toMatch(/resum/i)
    const after = await handler(event('/search-store/good/_count'))
    expect(after.statusCode).toBe(200)
    expect(JSON.parse(after.body!).count).toBe(0)
  })
})
