/**
 * Checking a whole set of enrichment configuration files before it is stored:
 * what would stop enrich at start is found, with every reason and its file,
 * and the check ends within its bounds (a script's endless top-level loop is
 * stopped by the per-event time limit).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkEnrichmentSet } from '../../../../lib/core/enrich/enrichments/check'
import { SCRIPT_LIMITS } from '../../../../lib/core/enrich/enrichments/javascript'
import { projectRoot } from '../../../../lib/local/handlers'
import { resolver } from '../helpers'

const SP = 'com.snowplowanalytics.snowplow'
const ENR = 'com.snowplowanalytics.snowplow.enrichments'
const doc = (vendor: string, name: string, version: string, parameters: object, enabled = true) =>
  JSON.stringify({ schema: `iglu:${vendor}/${name}/jsonschema/${version}`, data: { vendor, name, enabled, parameters } })
const anonIp = (octets = 1, enabled = true) => doc(SP, 'anon_ip', '1-0-1', { anonOctets: octets }, enabled)
const js = (script: string) => doc(SP, 'javascript_script_config', '1-0-1', { script: Buffer.from(script).toString('base64') })
const sql = (query: string, placeholders: number[]) =>
  doc(ENR, 'sql_query_enrichment_config', '1-0-1', {
    inputs: placeholders.map((p) => ({ placeholder: p, pojo: { field: 'user_id' } })),
    database: { postgresql: { host: '127.0.0.1', port: 1, sslMode: false, username: 'u', password: 'p', database: 'd' } },
    query: { sql: query },
    output: { expectedRows: 'AT_MOST_ONE', json: { schema: 'iglu:com.acme/customer/jsonschema/1-0-0', describes: 'ALL_ROWS', propertyNames: 'AS_IS' } },
    cache: { size: 10, ttl: 60 },
  })
const refererParser = (uri: string) => doc(SP, 'referer_parser', '2-0-1', { internalDomains: [], uri, database: 'referers-latest.json' })

/** A probe that answers for the locations it knows and records what it was asked. */
function probe(reachable: readonly string[] = []) {
  const asked: string[] = []
  return {
    asked,
    probeAsset: async (location: string) => {
      asked.push(location)
      return reachable.includes(location) ? undefined : 'HTTP 404'
    },
  }
}
const check = (files: Record<string, string>, p = probe()) =>
  checkEnrichmentSet(Object.entries(files).map(([source, text]) => ({ source, text })), { resolver, probeAsset: p.probeAsset })

describe('checking a set of enrichment files', () => {
  it('accepts a valid set, naming the enabled and the disabled files', async () => {
    expect(await check({ 'anon_ip.json': anonIp(), 'off.json': anonIp(2, false), 'script.json': js('function process(e) { return [] }') })).toEqual({
      ok: true,
      enabled: ['anon_ip.json', 'script.json'],
      disabled: ['off.json'],
    })
  })

  it('refuses a second anon_ip, naming both files', async () => {
    expect(await check({ 'anon_ip.json': anonIp(), 'anon_ip_2.json': anonIp(2) })).toEqual({
      ok: false,
      errors: ['anon_ip_2.json: the anon_ip enrichment is configured twice (also in anon_ip.json)'],
    })
    // disabled, the first one is no duplicate
    expect(await check({ 'anon_ip.json': anonIp(1, false), 'anon_ip_2.json': anonIp(2) })).toMatchObject({ ok: true })
  })

  it('refuses a script with a syntax error', async () => {
    const r = await check({ 'bad.json': js('function process(event) { return [ }') })
    expect(r.ok).toBe(false)
    expect(!r.ok && r.errors).toEqual([expect.stringMatching(/^bad\.json: Error compiling JavaScript function: \[SyntaxError: .*bad\.json/)])
  })

  it('refuses a script whose top-level code never ends, stopped by the per-event time limit', async () => {
    const r = await check({ 'loop.json': js('while (true) {}\nfunction process(event) { return [] }') })
    expect(r).toEqual({ ok: false, errors: [`loop.json: Error compiling JavaScript function: [InternalError: interrupted: the script ran longer than its limit of ${SCRIPT_LIMITS.timeMs} ms per event in loop.json]`] })
  })

  it('tries process() on sample events: refuses one that does not finish, stopping at the first sample', async () => {
    const r = await check({ 'endless.json': js('function process(event) { while (true) {} }') })
    expect(r).toEqual({
      ok: false,
      errors: [`endless.json: process() did not finish within its limit of ${SCRIPT_LIMITS.timeMs} ms on a sample page view; enrich would spend that limit on every such event and fail it (does process() loop forever?)`],
    })
    // endless on one kind of event only: refused all the same, naming it
    const some = await check({ 'some.json': js('function process(event) { if (event.getEvent() === "struct") for (;;) {} return null }') })
    expect(some).toMatchObject({ ok: false, errors: [expect.stringContaining('some.json: process() did not finish within its limit of 100 ms on a sample structured event')] })
  })

  it('refuses a process() that fails on every sample event, and keeps one that fails on some only', async () => {
    const r = await check({ 'throws.json': js('function process(event) { return JSON.parse(event.getContexts()).data[0].data.missing.value }') })
    expect(r).toMatchObject({ ok: false, errors: [expect.stringMatching(/^throws\.json: process\(\) fails on every sample event, so it would fail every event \(return null for events it does not handle\): on a page view: Error during execution of JavaScript function: \[TypeError: .*; on a self-describing event \(link_click\): .*; on a structured event: /)] })
    const notAList = await check({ 'object.json': js('function process(event) { return { not: "a list" } }') })
    expect(notAList).toMatchObject({ ok: false, errors: [expect.stringContaining('object.json: process() fails on every sample event')] })
    // page views only: the other events go through
    expect(await check({ 'pv.json': js('function process(event) { if (event.getEvent() === "page_view") throw new Error("no page views"); return null }') })).toMatchObject({ ok: true })
    // what the samples carry: the usual fields, a context, a self-describing event, the headers
    const reads = js(`function process(event, params, headers) {
      var ctx = JSON.parse(event.getContexts()).data[0].schema
      var ue = event.getUnstruct_event() === null ? null : JSON.parse(event.getUnstruct_event()).data.schema
      if (!event.getApp_id() || !event.getUser_id() || !event.getPage_url() || !event.getEvent_id() || headers.length === 0 || !ctx) throw new Error("missing")
      return ue === null ? null : [{ schema: "iglu:com.acme/seen/jsonschema/1-0-0", data: { ue: ue } }]
    }`)
    expect(await check({ 'reads.json': reads })).toMatchObject({ ok: true })
  })

  it('refuses a script without process, and one that throws at top level', async () => {
    const r = await check({ 'a.json': js('var x = 1'), 'b.json': js('throw new Error("no")\nfunction process() {}') })
    expect(r).toEqual({
      ok: false,
      errors: ['a.json: the script does not define a function process(event, params)', expect.stringMatching(/^b\.json: .*Error: no/)],
    })
  })

  it('refuses an SQL query with 3 placeholders and 2 inputs, without connecting to the database', async () => {
    const r = await check({ 'sql.json': sql('SELECT 1 WHERE ? = ? AND ? > 0', [1, 2]) })
    expect(r).toEqual({ ok: false, errors: [expect.stringMatching(/^sql\.json: query\.sql has 3 placeholder\(s\) \(\?\) but the inputs fill position\(s\) 1, 2/)] })
    expect(await check({ 'sql.json': sql('SELECT 1 WHERE ? = ? AND ? > 0', [1, 2, 3]) })).toMatchObject({ ok: true })
  })

  it('refuses an API request template with a placeholder no input fills', async () => {
    const api = doc(ENR, 'api_request_enrichment_config', '1-0-2', {
      inputs: [{ key: 'user', pojo: { field: 'user_id' } }],
      api: { http: { method: 'GET', uri: 'http://127.0.0.1:1/users/{{user}}?page={{page}}', timeout: 1000, authentication: {} } },
      outputs: [{ schema: 'iglu:com.acme/user/jsonschema/1-0-0', json: { jsonPath: '$.record' } }],
      cache: { size: 10, ttl: 60 },
    })
    expect(await check({ 'api.json': api })).toEqual({ ok: false, errors: ['api.json: api.http.uri uses {{page}}, which no input provides (inputs: user)'] })
  })

  it('refuses an asset that does not answer, and one at a location enrich cannot read; asks each asset once', async () => {
    const p = probe()
    const r = await check({ 'referer_parser.json': refererParser('http://127.0.0.1:9/assets'), 'ua.json': doc(SP, 'ua_parser_config', '1-0-1', { uri: 'gs://bucket/ua', database: 'regexes.yaml' }) }, p)
    expect(r).toEqual({
      ok: false,
      errors: [
        'referer_parser.json: asset database at http://127.0.0.1:9/assets/referers-latest.json cannot be read: HTTP 404',
        'ua.json: gs://bucket/ua/regexes.yaml: assets can be read from s3://, http(s):// and file:// locations, not gs://',
      ],
    })
    expect(p.asked).toEqual(['http://127.0.0.1:9/assets/referers-latest.json'])
    expect(await check({ 'referer_parser.json': refererParser('http://127.0.0.1:9/assets') }, probe(['http://127.0.0.1:9/assets/referers-latest.json']))).toMatchObject({ ok: true })
  })

  it('gives every reason at once', async () => {
    const r = await check({ 'a.json': anonIp(), 'b.json': anonIp(), 'c.json': '{"schema": ', 'd.json': js('function process( {') })
    expect(!r.ok && r.errors.map((e) => e.split(':')[0])).toEqual(['c.json', 'b.json', 'd.json'])
  })

  it("accepts the repository's enrichments/ directory (its assets answering)", async () => {
    const dir = join(projectRoot, 'enrichments')
    const files = readdirSync(dir).filter((n) => n.endsWith('.json')).map((n) => ({ source: n, text: readFileSync(join(dir, n), 'utf8') }))
    const r = await checkEnrichmentSet(files, { resolver, probeAsset: async () => undefined })
    expect(r).toMatchObject({ ok: true })
  })
})
