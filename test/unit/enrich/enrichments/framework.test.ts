/**
 * Enrichment configuration files: validation through the resolver, the
 * errors that stop enrich (with the file and the reason), disabled files,
 * the execution order, and the derived contexts' validation.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Enricher } from '../../../../lib/core/enrich/enrich'
import { fingerprint } from '../../../../lib/core/enrich/enrichments/event-fingerprint'
import { ORDER, orderOf, type EnrichmentModule } from '../../../../lib/core/enrich/enrichments/module'
import { buildEnrichments, loadEnrichmentConfigs } from '../../../../lib/core/enrich/enrichments/registry'
import { ENRICH_PROCESSOR } from '../../../../lib/core/enrich/version'
import { projectRoot } from '../../../../lib/local/handlers'
import { badRows, batch, columns, only, resolver, tp2 } from '../helpers'

const file = (source: string, doc: unknown) => ({ source, text: typeof doc === 'string' ? doc : JSON.stringify(doc) })
const fingerprintConfig = (parameters: unknown, enabled = true) => ({
  schema: 'iglu:com.snowplowanalytics.snowplow/event_fingerprint_config/jsonschema/1-0-1',
  data: { vendor: 'com.snowplowanalytics.snowplow', name: 'event_fingerprint_config', enabled, parameters },
})
const noAssets = { path: (l: string) => { throw new Error(`no asset ${l}`) } }

describe('enrichment configuration files', () => {
  it('reads valid files, skips disabled ones and builds their steps', async () => {
    const r = await loadEnrichmentConfigs([
      file('fp.json', fingerprintConfig({ excludeParameters: ['eid'], hashAlgorithm: 'MD5' })),
    ], resolver)
    expect(r).toMatchObject({ ok: true, skipped: [] })
    if (!r.ok) return
    const built = await buildEnrichments(r.configs, { assets: noAssets, legacyOrder: false })
    expect(built.ok && built.enrichments.map((e) => [e.id, e.order])).toEqual([['event-fingerprint', ORDER.eventFingerprint]])
    const off = await loadEnrichmentConfigs([file('off.json', fingerprintConfig({ excludeParameters: [], hashAlgorithm: 'MD5' }, false))], resolver)
    expect(off).toEqual({ ok: true, configs: [], skipped: ['off.json'] })
  })

  it('names the file and the reason for every configuration that cannot be used', async () => {
    const r = await loadEnrichmentConfigs([
      file('broken.json', '{"schema": '),
      file('plain.json', { name: 'anon_ip' }),
      file('unknown.json', { schema: 'iglu:com.acme/my_enrichment/jsonschema/1-0-0', data: {} }),
      file('removed.json', { schema: 'iglu:com.snowplowanalytics.snowplow/user_agent_utils_config/jsonschema/1-0-0', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'user_agent_utils_config', enabled: true, parameters: {} } }),
      file('invalid.json', fingerprintConfig({ hashAlgorithm: 'MD5' })),
      file('wrong-model.json', { schema: 'iglu:com.snowplowanalytics.snowplow/event_fingerprint_config/jsonschema/2-0-0', data: {} }),
    ], resolver)
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.errors).toHaveLength(6)
    expect(r.errors[0]).toMatch(/^broken\.json: not valid JSON: /)
    expect(r.errors[1]).toMatch(/^plain\.json: an enrichment configuration is a self-describing JSON document/)
    expect(r.errors[2]).toMatch(/^unknown\.json: iglu:com\.acme\/my_enrichment\/jsonschema\/1-0-0 is not an enrichment this version knows \(known: .*event_fingerprint_config/)
    expect(r.errors[3]).toMatch(/^removed\.json: the user-agent-utils enrichment was removed from Snowplow enrich .* use ua_parser_config or yauaa_enrichment_config instead$/)
    expect(r.errors[4]).toMatch(/^invalid\.json: invalid against iglu:com\.snowplowanalytics\.snowplow\/event_fingerprint_config\/jsonschema\/1-0-1: .*excludeParameters/)
    expect(r.errors[5]).toMatch(/^wrong-model\.json: .* is not a supported version of the event_fingerprint_config enrichment \(expected iglu:com\.snowplowanalytics\.snowplow\/event_fingerprint_config\/jsonschema\/1-\*-\*\)$/)
  })

  it('accepts every file of the repository\'s ready-to-use set', async () => {
    const dir = join(projectRoot, 'enrichments')
    const files = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => ({ source: f, text: readFileSync(join(dir, f), 'utf8') }))
    const r = await loadEnrichmentConfigs(files, resolver)
    if (!r.ok) throw new Error(r.errors.join('\n'))
    expect(r.configs.length + r.skipped.length).toBe(files.length)
  })

  it('refuses an enrichment configured twice', async () => {
    const c = fingerprintConfig({ excludeParameters: [], hashAlgorithm: 'SHA1' })
    const r = await loadEnrichmentConfigs([file('a.json', c), file('b.json', c)], resolver)
    expect(r).toEqual({ ok: false, errors: ['b.json: the event_fingerprint_config enrichment is configured twice (also in a.json)'] })
  })

  it('reports a configuration its module cannot use when the steps are built', async () => {
    const r = await loadEnrichmentConfigs([file('fp.json', fingerprintConfig({ excludeParameters: [], hashAlgorithm: 'MD5' }))], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const bad = r.configs.map((c) => ({ ...c, parameters: { ...c.parameters, hashAlgorithm: 'CRC32' } }))
    expect(await buildEnrichments(bad, { assets: noAssets, legacyOrder: false })).toEqual({ ok: false, errors: ['fp.json: hashAlgorithm must be one of MD5, SHA1, SHA256, SHA384, SHA512, got "CRC32"'] })
  })
})

describe('execution order', () => {
  it('puts JavaScript before currency, weather and IP lookups in the legacy order', () => {
    const legacy = (['javascript', 'currencyConversion', 'weather', 'ipLookups', 'asnLookups'] as const).map((k) => orderOf(k, true))
    expect([...legacy].sort((a, b) => a - b)).toEqual(legacy)
    expect(orderOf('javascript', false)).toBeGreaterThan(orderOf('ipLookups', false))
    expect(orderOf('currencyConversion', false)).toBeLessThan(orderOf('refererParser', false))
  })
})

describe('event fingerprint', () => {
  it('hashes the parameters sorted by name, without nulls and excluded ones', () => {
    const params = new Map<string, string | null>([['stm', '1'], ['se_ac', 'buy'], ['e', 'se'], ['n', null]])
    expect(fingerprint(params, new Set(['stm']), 'md5')).toBe('6829c2021516783f1ef03a9e9736ac77')
  })
  it('sets event_fingerprint in enriched events', async () => {
    const r = await loadEnrichmentConfigs([file('fp.json', fingerprintConfig({ excludeParameters: ['eid'], hashAlgorithm: 'SHA256' }))], resolver)
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: noAssets, legacyOrder: false })
    if (!built.ok) throw new Error(built.errors.join())
    const e = new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments })
    const a = columns((only(await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&eid=00000000-0000-4000-8000-000000000001'), batch()), 'good')[0] as { tsv: string }).tsv)
    const b = columns((only(await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&eid=00000000-0000-4000-8000-000000000002'), batch()), 'good')[0] as { tsv: string }).tsv)
    expect(a.event_fingerprint).toMatch(/^[0-9a-f]{64}$/)
    expect(a.event_fingerprint).toBe(b.event_fingerprint)
  })
})

describe('derived contexts', () => {
  const emitting = (data: unknown): EnrichmentModule => ({
    vendor: 'com.snowplowanalytics.snowplow', name: 'event_fingerprint_config', models: [1],
    create: () => ({ id: 'test', order: 12, run: () => ({ contexts: [{ schema: 'iglu:com.snowplowanalytics.snowplow/ua_parser_context/jsonschema/1-0-0', data: JSON.stringify(data) }] }) }),
  })
  async function run(module: EnrichmentModule) {
    const r = await loadEnrichmentConfigs([file('x.json', fingerprintConfig({ excludeParameters: [], hashAlgorithm: 'MD5' }))], resolver, [module])
    if (!r.ok) throw new Error(r.errors.join())
    const built = await buildEnrichments(r.configs, { assets: noAssets, legacyOrder: false }, [module])
    if (!built.ok) throw new Error(built.errors.join())
    return new Enricher({ resolver, processor: ENRICH_PROCESSOR, emitFailed: true, enrichments: built.enrichments }).enrichRecord(tp2('e=pv&p=web&tv=js-3'), batch())
  }
  const ua = { useragentFamily: 'Firefox', useragentMajor: '1', useragentMinor: null, useragentPatch: null, useragentVersion: 'Firefox 1', osFamily: 'Linux', osMajor: null, osMinor: null, osPatch: null, osPatchMinor: null, osVersion: 'Linux', deviceFamily: 'Other' }
  it('keeps a valid derived context', async () => {
    const o = await run(emitting(ua))
    expect(columns((only(o, 'good')[0] as { tsv: string }).tsv).derived_contexts).toContain('ua_parser_context')
  })
  it('turns an invalid derived context into a schema violation (source derived_contexts)', async () => {
    const o = await run(emitting({ ...ua, useragentFamily: 42 }))
    expect(only(o, 'good')).toHaveLength(0)
    const [row] = badRows(o)
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1')
    expect(row.data.failure.messages[0]).toMatchObject({ schemaKey: 'iglu:com.snowplowanalytics.snowplow/ua_parser_context/jsonschema/1-0-0', error: { error: 'ValidationError' } })
  })
})
