import { mkdtempSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { encodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../../lib/core/thrift/types'
import { floe } from '../../support/process'

describe('floe enrich --config (file-based variant)', () => {
  it('reads payload files, writes good/incomplete/bad with rotation, prints progress and a summary', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-enrich-'))
    mkdirSync(join(dir, 'in', 'sub'), { recursive: true })
    const rec = (qs: string) => encodeCollectorPayload({ schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: '10.0.0.1', timestamp: 1714470000000, encoding: 'UTF-8', collector: 'c', path: '/com.snowplowanalytics.snowplow/tp2', querystring: qs })
    for (let i = 0; i < 30; i++) writeFileSync(join(dir, 'in', i % 2 ? 'sub' : '', `p${i}`), rec(`e=pv&p=web&tv=t&aid=file-${i}&page=${'x'.repeat(200)}`))
    writeFileSync(join(dir, 'in', 'bad-bytes'), 'nonsense')
    writeFileSync(join(dir, 'in', 'invalid'), rec('e=pv&p=web&tv=t&dtm=soon'))
    const config = join(dir, 'enrich.hocon')
    writeFileSync(config, `license.accept = true
input { type = FileSystem, dir = "${join(dir, 'in')}" }
output {
  good { type = FileSystem, file = "${join(dir, 'out', 'good')}", maxBytes = 2000 }
  incomplete { type = FileSystem, file = "${join(dir, 'out', 'incomplete')}" }
  bad { type = FileSystem, file = "${join(dir, 'out', 'bad')}" }
}`)
    const p = floe(['enrich', '--config', config], { FLOE_IGLU_CENTRAL_URL: '' })
    expect(await p.exited).toBe(0)
    expect(p.output()).toMatch(/enrich: 32\/32 files, good 30, incomplete 1, bad 2/)
    expect(p.output()).toMatch(/enrich done: 32 payloads .* good 30, incomplete 1, bad 2, pii 0, invalid_enriched 0/)
    const out = readdirSync(join(dir, 'out')).sort()
    expect(out.filter((f) => f.startsWith('good.')).length).toBeGreaterThan(1)
    expect(out).toContain('incomplete')
    const good = out.filter((f) => f.startsWith('good.')).flatMap((f) => {
      const text = readFileSync(join(dir, 'out', f), 'utf8')
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2000)
      return text.trim().split('\n')
    })
    expect(good.map((l) => l.split('\t')[0]).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `file-${i}`).sort())
    const bad = readFileSync(join(dir, 'out', 'bad'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).schema)
    expect(bad.sort()).toEqual([
      'iglu:com.snowplowanalytics.snowplow.badrows/collector_payload_format_violation/jsonschema/1-0-0',
      'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1',
    ])
  })

  it('refuses a configuration without licence acceptance, naming the way to accept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-enrich-'))
    const config = join(dir, 'enrich.hocon')
    writeFileSync(config, `input { type = FileSystem, dir = "${dir}" }\noutput { good { type = FileSystem, file = "${dir}/g" }, bad { type = FileSystem, file = "${dir}/b" } }`)
    const p = floe(['enrich', '--config', config], { ACCEPT_LIMITED_USE_LICENSE: '' })
    expect(await p.exited).toBe(2)
    expect(p.output()).toContain('ACCEPT_LIMITED_USE_LICENSE=yes')
  })
})

describe('floe enrich --enrichments (file-based variant)', () => {
  it('runs the configured enrichments', async () => {
    const { productionEnrichments, ENRICHABLE, writeFileEnrichConfig } = await import('../../support/enrichments')
    const { F } = await import('../../../lib/core/enrich/fields')
    const dir = mkdtempSync(join(tmpdir(), 'floe-enrich-set-'))
    mkdirSync(join(dir, 'in'))
    writeFileSync(join(dir, 'in', 'p1'), encodeCollectorPayload({
      schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: '10.0.0.1', timestamp: 1714470000000, encoding: 'UTF-8', collector: 'c', path: '/i', querystring: ENRICHABLE.query,
      userAgent: ENRICHABLE.headers['User-Agent'], headers: Object.entries(ENRICHABLE.headers).map(([k, v]) => `${k}: ${v}`),
    }))
    const config = writeFileEnrichConfig(join(dir, 'enrich.hocon'), join(dir, 'in'), dir)
    const p = floe(['enrich', '--config', config, '--enrichments', productionEnrichments().dir], { FLOE_IGLU_CENTRAL_URL: '' })
    expect(await p.exited).toBe(0)
    const c = readFileSync(join(dir, 'good'), 'utf8').trim().split('\t')
    expect([c[F.user_ipaddress], c[F.geo_city], c[F.refr_medium], c[F.mkt_campaign]]).toEqual(['175.16.199.x', 'Changchun', 'search', 'spring'])
    expect(c[F.event_fingerprint]).toMatch(/^[0-9a-f]{32}$/)
    expect(c[F.derived_contexts]).toContain('iglu:nl.basjes/yauaa_context/jsonschema/1-0-5')
  })

  it('runs the API request and SQL query enrichments against their servers, and ends when the run is done', async () => {
    const { createServer } = await import('node:http')
    const { PGlite } = await import('@electric-sql/pglite')
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket')
    const { F } = await import('../../../lib/core/enrich/fields')
    const seen: string[] = []
    const api = createServer((req, res) => {
      seen.push(req.url!)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ record: { latitude: 10.5, longitude: 20.25 } }))
    })
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r))
    const db = await PGlite.create()
    await db.exec("CREATE TABLE places (app_id TEXT, lat DOUBLE PRECISION, lon DOUBLE PRECISION); INSERT INTO places VALUES ('shop', 51.5, -0.12)")
    const pgServer = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 8 })
    await pgServer.start()
    try {
      const GEO = 'iglu:com.snowplowanalytics.snowplow/geolocation_context/jsonschema/1-1-0'
      const ENR = 'com.snowplowanalytics.snowplow.enrichments'
      const doc = (name: string, version: string, parameters: object) => JSON.stringify({ schema: `iglu:${ENR}/${name}/jsonschema/${version}`, data: { vendor: ENR, name, enabled: true, parameters } })
      const dir = mkdtempSync(join(tmpdir(), 'floe-enrich-lookups-'))
      mkdirSync(join(dir, 'in'))
      mkdirSync(join(dir, 'enrichments'))
      writeFileSync(join(dir, 'enrichments', 'api.json'), doc('api_request_enrichment_config', '1-0-2', {
        inputs: [{ key: 'app', pojo: { field: 'app_id' } }],
        api: { http: { method: 'GET', uri: `http://127.0.0.1:${(api.address() as { port: number }).port}/geo/{{app}}`, timeout: 5000, authentication: {} } },
        outputs: [{ schema: GEO, json: { jsonPath: '$.record' } }],
        cache: { size: 10, ttl: 60 },
      }))
      writeFileSync(join(dir, 'enrichments', 'sql.json'), doc('sql_query_enrichment_config', '1-0-1', {
        inputs: [{ placeholder: 1, pojo: { field: 'app_id' } }],
        database: { postgresql: { host: '127.0.0.1', port: Number(pgServer.getServerConn().split(':').pop()), sslMode: false, username: 'postgres', password: 'postgres', database: 'postgres' } },
        query: { sql: 'SELECT lat AS latitude, lon AS longitude FROM places WHERE app_id = ?' },
        output: { expectedRows: 'EXACTLY_ONE', json: { schema: GEO, describes: 'ALL_ROWS', propertyNames: 'AS_IS' } },
        cache: { size: 10, ttl: 60 },
      }))
      writeFileSync(join(dir, 'in', 'p1'), encodeCollectorPayload({ schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: '10.0.0.1', timestamp: 1714470000000, encoding: 'UTF-8', collector: 'c', path: '/i', querystring: 'e=pv&p=web&tv=js-3&aid=shop' }))
      const { writeFileEnrichConfig } = await import('../../support/enrichments')
      const config = writeFileEnrichConfig(join(dir, 'enrich.hocon'), join(dir, 'in'), dir)
      const p = floe(['enrich', '--config', config, '--enrichments', join(dir, 'enrichments')], { FLOE_IGLU_CENTRAL_URL: '' })
      expect(await p.exited).toBe(0)
      const c = readFileSync(join(dir, 'good'), 'utf8').trim().split('\t')
      // the SQL query runs before the API request; each step's contexts go first
      expect(JSON.parse(c[F.derived_contexts]!).data).toEqual([{ schema: GEO, data: { latitude: 10.5, longitude: 20.25 } }, { schema: GEO, data: { latitude: 51.5, longitude: -0.12 } }])
      expect(seen).toEqual(['/geo/shop'])
    } finally {
      api.closeAllConnections()
      await new Promise((r) => api.close(r))
      await pgServer.stop()
      await db.close()
    }
  })
})
