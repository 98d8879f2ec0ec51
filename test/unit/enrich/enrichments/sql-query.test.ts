/**
 * `sql_query_enrichment_config` against real servers: PostgreSQL (PGlite
 * served over the wire protocol) and MySQL (a private MariaDB, skipped with a
 * message where it is not installed). Placeholders, types, expectedRows ×
 * describes, propertyNames, the cache, errors, and the shared pool. Cases of
 * Snowplow's SqlQueryEnrichmentSpec, InputSpec and OutputSpec.
 */
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { EnrichedEvent } from '../../../../lib/core/enrich/event'
import type { LookupServices, SqlDatabase, SqlDatabaseConfig } from '../../../../lib/core/enrich/enrichments/lookups'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { envelope, jsonParam, placeholders, propertyName, rowObjects } from '../../../../lib/core/enrich/enrichments/sql-query'
import type { Enrichment, StepResult } from '../../../../lib/core/enrich/steps'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { lookupServices, type RuntimeLookupServices } from '../../../../lib/runtime/lookup-services'
import { MARIADB_MISSING, mariadbBinaries, startMariaDb, type MariaDb } from '../../../support/mariadb'
import { badRows, batch, derivedOf, enrichmentConfig, goodColumns, resolver, tp2 } from '../helpers'

const ENR = 'com.snowplowanalytics.snowplow.enrichments'
const GEO = 'iglu:com.snowplowanalytics.snowplow/geolocation_context/jsonschema/1-1-0'
const USER = 'iglu:com.acme/user/jsonschema/1-0-0'

describe('placeholders', () => {
  it('numbers the ? outside literals, quoted names and comments for PostgreSQL; ?? is a literal ?', () => {
    expect(placeholders(`SELECT '?', "a?", $$?$$, $t$ ? $t$, E'\\'?' FROM t -- ?\n WHERE a = ? /* ? /* ? */ ? */ AND b ?? 'k' AND c = ?`, 'postgresql')).toEqual({
      sql: `SELECT '?', "a?", $$?$$, $t$ ? $t$, E'\\'?' FROM t -- ?\n WHERE a = $1 /* ? /* ? */ ? */ AND b ? 'k' AND c = $2`,
      count: 2,
    })
  })
  it('keeps ? for MySQL, with its backslash escapes, backquotes and # comments', () => {
    expect(placeholders("SELECT 'it\\'s ?', `a?`, \"b\\\"?\" FROM t # ?\nWHERE a = ? AND b = ?", 'mysql')).toEqual({ sql: "SELECT 'it\\'s ?', `a?`, \"b\\\"?\" FROM t # ?\nWHERE a = ? AND b = ?", count: 2 })
  })
})

describe('values and rows', () => {
  it('binds JSON values as Snowplow does: numbers, booleans, strings that read as either; nothing for null, objects and arrays (InputSpec)', () => {
    expect([jsonParam(43.1), jsonParam(true), jsonParam('COMPLETED'), jsonParam('12'), jsonParam('12.5'), jsonParam('TRUE'), jsonParam('9223372036854775806')]).toEqual([43.1, true, 'COMPLETED', 12, 12.5, true, '9223372036854775806'])
    expect([jsonParam(null), jsonParam({ foo: 'bar' }), jsonParam([4, 8, 16])]).toEqual([undefined, undefined, undefined])
  })
  it('names properties as propertyNames says', () => {
    const names = ['some_column', 'SomeColumn', 'column_2', 'ID']
    expect(names.map((n) => propertyName(n, 'CAMEL_CASE'))).toEqual(['someColumn', 'SomeColumn', 'column2', 'ID'])
    expect(names.map((n) => propertyName(n, 'PASCAL_CASE'))).toEqual(['SomeColumn', 'SomeColumn', 'Column2', 'ID'])
    expect(names.map((n) => propertyName(n, 'SNAKE_CASE'))).toEqual(['some_column', '_some_column', 'column__2', '_i_d'])
    expect(names.map((n) => propertyName(n, 'LOWER_CASE'))).toEqual(['some_column', 'somecolumn', 'column_2', 'id'])
    expect(names.map((n) => propertyName(n, 'UPPER_CASE'))).toEqual(['SOME_COLUMN', 'SOMECOLUMN', 'COLUMN_2', 'ID'])
    expect(names.map((n) => propertyName(n, 'AS_IS'))).toEqual(names)
  })
  it('writes cells as JSON: exact numbers as written, JSON documents parsed, other text as strings', () => {
    expect(rowObjects({ columns: ['a', 'b', 'c', 'd', 'e', 'f', 'g'], rows: [[1, { text: '12345678901234567890' }, { text: '{"x": [1]}' }, { text: '2024-01-01 10:00:00' }, null, Number.NaN, 'x"y']] }, 'AS_IS')).toEqual([
      '{"a":1,"b":12345678901234567890,"c":{"x":[1]},"d":"2024-01-01 10:00:00","e":null,"f":null,"g":"x\\"y"}',
    ])
  })
  it('checks expectedRows and describes the rows (ALL_ROWS: one object or an array; EVERY_ROW: one context each)', () => {
    const rows = ['{"a":1}', '{"a":2}']
    const s = (expectedRows: any, describes: any) => ({ expectedRows, describes, schema: USER })
    expect(envelope(rows.slice(0, 1), s('EXACTLY_ONE', 'ALL_ROWS'))).toEqual({ contexts: [{ schema: USER, data: '{"a":1}' }] })
    expect(envelope(rows, s('EXACTLY_ONE', 'ALL_ROWS'))).toEqual({ error: 'exactly one row was expected, 2 given' })
    expect(envelope([], s('EXACTLY_ONE', 'EVERY_ROW'))).toEqual({ error: 'exactly one row was expected, 0 given' })
    expect(envelope([], s('AT_MOST_ONE', 'ALL_ROWS'))).toEqual({ contexts: [] })
    expect(envelope(rows, s('AT_MOST_ONE', 'EVERY_ROW'))).toEqual({ error: 'at most one row was expected, 2 given' })
    expect(envelope(rows, s('AT_LEAST_ONE', 'ALL_ROWS'))).toEqual({ contexts: [{ schema: USER, data: '[{"a":1},{"a":2}]' }] })
    expect(envelope([], s('AT_LEAST_ONE', 'ALL_ROWS'))).toEqual({ error: 'at least one row was expected, 0 given' })
    expect(envelope([], s('AT_LEAST_ZERO', 'ALL_ROWS'))).toEqual({ contexts: [{ schema: USER, data: '[]' }] })
    expect(envelope(rows, s('AT_LEAST_ZERO', 'EVERY_ROW'))).toEqual({ contexts: [{ schema: USER, data: '{"a":1}' }, { schema: USER, data: '{"a":2}' }] })
  })
})

/** The services, with every query counted (the real pools underneath). */
function counted(real: RuntimeLookupServices, clock: { now: number }): { services: LookupServices; queries: string[] } {
  const queries: string[] = []
  return {
    queries,
    services: {
      now: () => clock.now,
      sql(db: SqlDatabaseConfig): SqlDatabase {
        const pool = real.sql(db)
        return { query: (sql, params, t) => (queries.push(JSON.stringify(params)), pool.query(sql, params, t)) }
      },
    },
  }
}

interface Server {
  readonly engine: 'postgresql' | 'mysql'
  readonly host: string
  readonly port: number
  readonly username: string
  readonly password: string
  readonly database: string
  exec(sql: string): Promise<void>
}

const config = (srv: Server, sql: string, inputs: object[], output: object, extra: object = {}) =>
  enrichmentConfig(ENR, 'sql_query_enrichment_config', '1-0-1', {
    inputs,
    database: { [srv.engine]: { host: srv.host, port: srv.port, sslMode: false, username: srv.username, password: srv.password, database: srv.database } },
    query: { sql },
    output: { expectedRows: 'AT_LEAST_ZERO', ...output, json: { schema: USER, describes: 'ALL_ROWS', propertyNames: 'AS_IS', ...((output as any).json ?? {}) } },
    cache: { size: 100, ttl: 60 },
    ...extra,
  })

async function step(doc: object, services: LookupServices): Promise<Enrichment> {
  const r = await loadEnrichmentConfigs([{ source: 'sql.json', text: JSON.stringify(doc) }], resolver)
  if (!r.ok) throw new Error(r.errors.join('\n'))
  const b = await buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false, services })
  if (!b.ok) throw new Error(b.errors.join('\n'))
  return b.enrichments[0]!
}

function ev(fields: Record<string, string | number>, contexts: { schema: string; data: object }[] = []): EnrichedEvent {
  const e = new EnrichedEvent()
  for (const [k, v] of Object.entries(fields)) e.set(k as any, v)
  e.contexts = contexts.map((c) => ({ schema: c.schema, data: JSON.stringify(c.data) }))
  return e
}

const runStep = async (s: Enrichment, e: EnrichedEvent): Promise<StepResult> => s.run(e, { raw: null as never, pageQuery: null })
const dataOf = (r: StepResult) => (r.contexts ?? []).map((c) => ({ schema: c.schema, data: JSON.parse(c.data) }))
const errorOf = (r: StepResult) => (r.failures ?? []).map((f) => (f.message as { error: string }).error)

/** The same cases on both engines. */
function engineCases(name: string, server: () => Server, real: () => RuntimeLookupServices, typesSql: string, expectedTypes: object) {
  const clock = { now: 1_000_000 }
  const c = () => counted(real(), clock)

  it(`${name}: binds inputs to placeholders and gives one context for the one row, names in camel case`, async () => {
    const { services, queries } = c()
    const s = await step(config(server(), 'SELECT user_id, full_name, vip_level FROM users WHERE user_id = ? AND app_id = ?', [
      { placeholder: 2, pojo: { field: 'app_id' } },
      { placeholder: 1, json: { field: 'contexts', schemaCriterion: 'iglu:com.acme/login/jsonschema/1-*-*', jsonPath: '$.userId' } },
    ], { expectedRows: 'EXACTLY_ONE', json: { propertyNames: 'CAMEL_CASE' } }), services)
    const r = await runStep(s, ev({ app_id: 'shop' }, [{ schema: 'iglu:com.acme/login/jsonschema/1-0-0', data: { userId: 'u1' } }]))
    expect(r.failures).toBeUndefined()
    expect(dataOf(r)).toEqual([{ schema: USER, data: { userId: 'u1', fullName: 'Ada Lovelace', vipLevel: 3 } }])
    expect(queries).toEqual(['["u1","shop"]'])
  })

  it(`${name}: runs no query and adds nothing when an input finds nothing`, async () => {
    const { services, queries } = c()
    const s = await step(config(server(), 'SELECT * FROM users WHERE user_id = ?', [{ placeholder: 1, pojo: { field: 'user_id' } }], {}), services)
    expect(await runStep(s, ev({ app_id: 'shop' }))).toEqual({})
    const j = await step(config(server(), 'SELECT * FROM users WHERE user_id = ?', [{ placeholder: 1, json: { field: 'contexts', schemaCriterion: 'iglu:com.acme/login/jsonschema/1-*-*', jsonPath: '$.userId' } }], {}), services)
    expect(await runStep(j, ev({}, [{ schema: 'iglu:com.acme/login/jsonschema/1-0-0', data: { userId: null } }]))).toEqual({})
    expect(queries).toEqual([])
  })

  it(`${name}: never writes a value into the SQL`, async () => {
    const { services } = c()
    const s = await step(config(server(), 'SELECT user_id FROM users WHERE user_id = ?', [{ placeholder: 1, pojo: { field: 'user_id' } }], { json: { describes: 'EVERY_ROW' } }), services)
    for (const hostile of ["' OR '1'='1", "u1'; DROP TABLE users; --", 'u1\\', '?']) expect(await runStep(s, ev({ user_id: hostile }))).toEqual({})
    const all = await step(config(server(), 'SELECT count(*) AS n FROM users', [], { expectedRows: 'EXACTLY_ONE' }), services)
    expect(dataOf(await runStep(all, ev({})))).toEqual([{ schema: USER, data: { n: 3 } }])
  })

  it(`${name}: gives every row its context (EVERY_ROW) or an array of them (ALL_ROWS), and fails when the rows are not as expected`, async () => {
    const { services } = c()
    const q = 'SELECT user_id FROM users WHERE app_id = ? ORDER BY user_id'
    const every = await step(config(server(), q, [{ placeholder: 1, pojo: { field: 'app_id' } }], { expectedRows: 'AT_LEAST_ONE', json: { describes: 'EVERY_ROW' } }), services)
    expect(dataOf(await runStep(every, ev({ app_id: 'shop' })))).toEqual([{ schema: USER, data: { user_id: 'u1' } }, { schema: USER, data: { user_id: 'u2' } }])
    expect(errorOf(await runStep(every, ev({ app_id: 'nowhere' })))).toEqual([`SQL query on ${name} ${server().host}:${server().port}/${server().database}: at least one row was expected, 0 given`])
    const all = await step(config(server(), q, [{ placeholder: 1, pojo: { field: 'app_id' } }], { expectedRows: 'AT_LEAST_ZERO' }), services)
    expect(dataOf(await runStep(all, ev({ app_id: 'shop' })))).toEqual([{ schema: USER, data: [{ user_id: 'u1' }, { user_id: 'u2' }] }])
    const one = await step(config(server(), q, [{ placeholder: 1, pojo: { field: 'app_id' } }], { expectedRows: 'AT_MOST_ONE' }), services)
    expect(errorOf(await runStep(one, ev({ app_id: 'shop' })))[0]).toMatch(/at most one row was expected, 2 given$/)
    expect(await runStep(one, ev({ app_id: 'nowhere' }))).toEqual({})
    const quiet = await step(config(server(), q, [{ placeholder: 1, pojo: { field: 'app_id' } }], { expectedRows: 'AT_MOST_ONE' }, { ignoreOnError: true }), services)
    expect(await runStep(quiet, ev({ app_id: 'shop' }))).toEqual({})
  })

  it(`${name}: writes each column type as JSON`, async () => {
    const { services } = c()
    const s = await step(config(server(), typesSql, [{ placeholder: 1, pojo: { field: 'br_viewwidth' } }], { expectedRows: 'EXACTLY_ONE' }), services)
    const r = await runStep(s, ev({ br_viewwidth: 800 }))
    expect(r.failures).toBeUndefined()
    expect(dataOf(r)[0]!.data).toEqual(expectedTypes)
  })

  it(`${name}: keeps answers for cache.ttl seconds and failures for a tenth of it`, async () => {
    const { services, queries } = c()
    const s = await step(config(server(), 'SELECT full_name FROM users WHERE user_id = ?', [{ placeholder: 1, pojo: { field: 'user_id' } }], { expectedRows: 'EXACTLY_ONE' }, { cache: { size: 10, ttl: 100 } }), services)
    await runStep(s, ev({ user_id: 'u1' }))
    await runStep(s, ev({ user_id: 'u1' }))
    expect(queries).toHaveLength(1)
    clock.now += 100_000
    await runStep(s, ev({ user_id: 'u1' }))
    expect(queries).toHaveLength(2)
    expect(errorOf(await runStep(s, ev({ user_id: 'nobody' })))[0]).toMatch(/exactly one row was expected, 0 given$/)
    await runStep(s, ev({ user_id: 'nobody' }))
    expect(queries).toHaveLength(3)
    clock.now += 10_000
    await runStep(s, ev({ user_id: 'nobody' }))
    expect(queries).toHaveLength(4)
  })

  it(`${name}: reports a query the database refuses`, async () => {
    const { services } = c()
    const s = await step(config(server(), 'SELECT nope FROM no_such_table WHERE a = ?', [{ placeholder: 1, pojo: { field: 'app_id' } }], {}), services)
    expect(errorOf(await runStep(s, ev({ app_id: 'shop' })))[0]).toMatch(new RegExp(`^SQL query on ${name} .* failed: .*no_such_table`))
  })

  it(`${name}: answers many concurrent events through one pool`, async () => {
    const { services } = c()
    const s = await step(config(server(), 'SELECT full_name FROM users WHERE user_id = ?', [{ placeholder: 1, pojo: { field: 'user_id' } }], { expectedRows: 'AT_MOST_ONE' }, { cache: { size: 0, ttl: 0 } }), services)
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => runStep(s, ev({ user_id: `u${(i % 4) + 1}` }))))
    expect(rs.map((r) => dataOf(r)[0]?.data.full_name ?? null)).toEqual(Array.from({ length: 40 }, (_, i) => [ 'Ada Lovelace', 'Grace Hopper', 'Edsger Dijkstra', null][i % 4]))
  })
}

const FIXTURE = `
CREATE TABLE users (user_id VARCHAR(20) PRIMARY KEY, app_id VARCHAR(20), full_name VARCHAR(100), vip_level INT, lat DOUBLE PRECISION, lon DOUBLE PRECISION);
INSERT INTO users VALUES ('u1', 'shop', 'Ada Lovelace', 3, 51.5, -0.12), ('u2', 'shop', 'Grace Hopper', 1, 40.7, -74.0), ('u3', 'blog', 'Edsger Dijkstra', 2, 52.1, 5.1);
`

describe('sql_query_enrichment_config on PostgreSQL (PGlite over the wire)', () => {
  let db: PGlite
  let socket: PGLiteSocketServer
  let real: RuntimeLookupServices
  let srv: Server
  beforeAll(async () => {
    db = await PGlite.create()
    await db.exec(FIXTURE)
    socket = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 8 })
    await socket.start()
    const port = Number(socket.getServerConn().split(':').pop())
    srv = { engine: 'postgresql', host: '127.0.0.1', port, username: 'postgres', password: 'postgres', database: 'postgres', exec: async (sql) => void (await db.exec(sql)) }
    real = lookupServices()
  })
  afterAll(async () => {
    await real?.close()
    await socket?.stop()
    await db?.close()
  })
  engineCases('postgresql', () => srv, () => real, `SELECT ?::int AS width, 9007199254740993::bigint AS big, 12.50::numeric AS price, true AS ok, 'x'::text AS t, DATE '2016-06-10' AS d,
      '{"a": [1, 2]}'::jsonb AS j, TIMESTAMP '2024-01-02 03:04:05.5' AS ts, 1.5::real AS r, NULL::text AS n`,
  { width: 800, big: 9007199254740993, price: 12.5, ok: true, t: 'x', d: '2016-06-10T00:00:00.000Z', j: { a: [1, 2] }, ts: '2024-01-02 03:04:05.5', r: 1.5, n: null })

  it('postgresql: adds a context validated like every derived context, through the enricher', async () => {
    const s = await step(enrichmentConfig(ENR, 'sql_query_enrichment_config', '1-0-1', {
      inputs: [{ placeholder: 1, pojo: { field: 'user_id' } }],
      database: { postgresql: { host: srv.host, port: srv.port, sslMode: false, username: 'postgres', password: 'x', database: 'postgres' } },
      query: { sql: 'SELECT lat AS latitude, lon AS longitude FROM users WHERE user_id = ?' },
      output: { expectedRows: 'AT_MOST_ONE', json: { schema: GEO, describes: 'ALL_ROWS', propertyNames: 'AS_IS' } },
      cache: { size: 10, ttl: 10 },
    }), real)
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: [s] })
    const c = goodColumns(await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&uid=u1'), batch()))
    expect(derivedOf(c)).toEqual([{ schema: GEO, data: { latitude: 51.5, longitude: -0.12 } }])
    expect(badRows(await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&uid=u9'), batch()))).toEqual([])
  })

  it('postgresql: reports a database it cannot reach, naming it but not the password', async () => {
    const { createServer } = await import('node:net')
    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
    const port = (probe.address() as { port: number }).port
    await new Promise((r) => probe.close(r))
    const s = await step(config({ ...srv, port, password: 'secret-pw' }, 'SELECT 1 AS one WHERE ? IS NOT NULL', [{ placeholder: 1, pojo: { field: 'app_id' } }], {}), real)
    const [error] = errorOf(await runStep(s, ev({ app_id: 'shop' })))
    expect(error).toMatch(new RegExp(`^SQL query on postgresql 127.0.0.1:${port}/postgres failed: .*ECONNREFUSED`))
    expect(error).not.toContain('secret-pw')
  })

  it('refuses configurations it cannot use, naming the parameter', async () => {
    const errs = async (doc: object) => {
      const r = await loadEnrichmentConfigs([{ source: 'sql.json', text: JSON.stringify(doc) }], resolver)
      if (!r.ok) return r.errors
      const b = await buildEnrichments(r.configs, { assets: { path: () => '' }, legacyOrder: false, services: real })
      return b.ok ? [] : b.errors
    }
    expect(await errs(config(srv, 'SELECT 1 WHERE ? = ?', [{ placeholder: 1, pojo: { field: 'user_id' } }], {}))).toEqual([
      'sql.json: query.sql has 2 placeholder(s) (?) but the inputs fill position(s) 1: every position from 1 to 2 needs an input, and no other',
    ])
    expect(await errs(config(srv, 'SELECT 1', [{ placeholder: 1, pojo: { field: 'user_id' } }], {}))).toEqual([
      'sql.json: query.sql has 0 placeholder(s) (?) but the inputs fill position(s) 1: every position from 1 to 0 needs an input, and no other',
    ])
    expect(await errs(config(srv, 'SELECT ?', [{ placeholder: 1, pojo: { field: 'contexts' } }], {}))).toEqual([
      'sql.json: inputs[0] (placeholder 1): pojo field "contexts" is not an atomic field of the enriched event (contexts, unstruct_event and derived_contexts are read with a json input)',
    ])
  })
})

const bins = mariadbBinaries()
if (!bins) console.warn(MARIADB_MISSING)

describe.skipIf(!bins)('sql_query_enrichment_config on MySQL (a private MariaDB)', () => {
  let maria: MariaDb
  let real: RuntimeLookupServices
  let srv: Server
  beforeAll(async () => {
    maria = await startMariaDb()
    await maria.sql(`CREATE DATABASE floe; USE floe; ${FIXTURE}`)
    srv = { engine: 'mysql', host: maria.host, port: maria.port, username: maria.user, password: maria.password, database: 'floe', exec: (sql) => maria.sql(`USE floe; ${sql}`) }
    real = lookupServices()
  }, 60_000)
  afterAll(async () => {
    await real?.close()
    await maria?.stop()
  })
  engineCases('mysql', () => srv, () => real, `SELECT CAST(? AS SIGNED) AS width, CAST(9007199254740993 AS SIGNED) AS big, CAST(12.50 AS DECIMAL(10,2)) AS price, CAST(1 AS DECIMAL(1,0)) = 1 AS cmp,
      TRUE AS flag, 'x' AS t, DATE '2016-06-10' AS d, JSON_OBJECT('a', JSON_ARRAY(1, 2)) AS j, TIMESTAMP '2024-01-02 03:04:05.5' AS ts, NULL AS n`,
  { width: 800, big: 9007199254740993, price: 12.5, cmp: 1, flag: 1, t: 'x', d: '2016-06-10T00:00:00.000Z', j: '{"a": [1, 2]}', ts: '2024-01-02 03:04:05.5', n: null })
})
