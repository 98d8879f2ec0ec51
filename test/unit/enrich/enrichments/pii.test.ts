/**
 * `pii_enrichment_config`: the hashes of Snowplow's PiiPseudonymizerEnrichmentSpec
 * (SHA-256, salt `pepper123`) for atomic fields, contexts and the
 * self-describing event, its pii_transformation event, the rules for values a
 * path finds, every hash function, anonymousOnly, and the combination with
 * anon_ip of Snowplow's end-to-end case.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { piiSettings, Pseudonymizer } from '../../../../lib/core/enrich/enrichments/pii'
import { defaultResolver } from '../../../../lib/runtime/default-resolver'
import { projectRoot } from '../../../../lib/local/handlers'
import { batch, columns, configuredEnricher, derivedOf, enrichmentConfig, goodColumns, only, payload } from '../helpers'

const ENR = 'com.snowplowanalytics.snowplow.enrichments'
const resolver = defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '', FLOE_IGLU_DIRS: join(projectRoot, 'test/fixtures/pii-schemas') } })
const pii = (entries: object[], extra: object = {}, hashFunction = 'SHA-256', salt = 'pepper123') =>
  enrichmentConfig(ENR, 'pii_enrichment_config', '2-0-1', { pii: entries, strategy: { pseudonymize: { hashFunction, salt } } }, { emitEvent: true, ...extra })
const pojo = (field: string) => ({ pojo: { field } })
const json = (field: string, schemaCriterion: string, jsonPath: string) => ({ json: { field, schemaCriterion, jsonPath } })
const sd = (schema: string, data: object) => ({ schema, data })
const cx = (...entities: object[]) => encodeURIComponent(JSON.stringify(sd('iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', entities)))
const ue = (entity: object) => encodeURIComponent(JSON.stringify(sd('iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', entity)))
const EMAIL_1_0_0 = 'iglu:com.acme/email_sent/jsonschema/1-0-0'
const EMAIL_1_1_0 = 'iglu:com.acme/email_sent/jsonschema/1-1-0'
const CLICKED = 'iglu:com.mailgun/message_clicked/jsonschema/1-0-0'

async function run(config: object, querystring: string, extra: object = {}, more: object[] = []) {
  const e = await configuredEnricher([config, ...more], undefined, { resolver, emitPii: true })
  const o = await e.enrichRecord(payload({ path: '/i', querystring, ...extra }), batch())
  const good = goodColumns(o)
  const piiEvents = only(o, 'pii').map((p) => columns((p as { tsv: string }).tsv))
  return { good, piiEvents }
}

describe('pii_enrichment_config', () => {
  it('hashes atomic fields as Snowplow\'s spec does, and leaves null ones alone', async () => {
    const config = pii(['user_id', 'user_ipaddress', 'user_fingerprint', 'domain_userid', 'network_userid', 'tr_orderid', 'ti_orderid', 'se_category', 'se_action', 'se_label', 'se_property', 'ip_domain'].map(pojo))
    const { good } = await run(config, 'e=se&p=web&tv=js-3&uid=john%40acme.com&fp=its_you_again!&duid=d1&tid=1&se_ca=c&se_ac=a&se_la=l&se_pr=p', { ipAddress: '70.46.123.145', networkUserId: 'c9a0b9a2-1c2e-4b8e-9d55-2f1f3a6b7c8d' })
    expect(good.user_id).toBe('7d8a4beae5bc9d314600667d2f410918f9af265017a6ade99f60a9c8f3aac6e9')
    expect(good.user_ipaddress).toBe('dd9720903c89ae891ed5c74bb7a9f2f90f6487927ac99afe73b096ad0287f3f5')
    expect(good.user_fingerprint).toBe('27abac60dff12792c6088b8d00ce7f25c86b396b8c3740480cd18e21068ecff4')
    const p = new Pseudonymizer(piiSettings(config.data))
    expect([good.domain_userid, good.network_userid, good.se_category, good.se_action, good.se_label, good.se_property]).toEqual(['d1', 'c9a0b9a2-1c2e-4b8e-9d55-2f1f3a6b7c8d', 'c', 'a', 'l', 'p'].map((v) => p.scramble(v)))
    expect([good.ip_domain, good.tr_orderid]).toEqual(['', ''])
  })

  it('hashes JSON paths in contexts and the self-describing event and emits the pii_transformation event of Snowplow\'s spec', async () => {
    const config = pii([
      pojo('user_id'), pojo('user_ipaddress'), pojo('user_fingerprint'),
      json('unstruct_event', 'iglu:com.mailgun/message_clicked/jsonschema/1-0-0', '$.ip'),
      json('contexts', 'iglu:com.acme/email_sent/jsonschema/1-0-*', '$.emailAddress'),
      json('contexts', 'iglu:com.acme/email_sent/jsonschema/1-1-0', '$.data.emailAddress2'),
    ])
    const qs = `e=ue&p=web&tv=js-3&uid=john%40acme.com&fp=its_you_again!&co=${cx(sd(EMAIL_1_0_0, { emailAddress: 'jim@acme.com', emailAddress2: 'bob@acme.com' }), sd(EMAIL_1_1_0, { data: { emailAddress2: 'bob@acme.com' } }))}&ue_pr=${ue(sd(CLICKED, { ip: '50.56.129.169', domain: 'acme.com' }))}`
    const { good, piiEvents } = await run(config, qs, { ipAddress: '70.46.123.145' })
    const contexts = JSON.parse(good.contexts).data
    expect(contexts).toEqual([
      sd(EMAIL_1_0_0, { emailAddress: '72f323d5359eabefc69836369e4cabc6257c43ab6419b05dfb2211d0e44284c6', emailAddress2: 'bob@acme.com' }),
      sd(EMAIL_1_1_0, { data: { emailAddress2: '1c6660411341411d5431669699149283d10e070224be4339d52bbc4b007e78c5' } }),
    ])
    expect(JSON.parse(good.unstruct_event).data).toEqual(sd(CLICKED, { ip: '269c433d0cc00395e3bc5fe7f06c5ad822096a38bec2d8a005367b52c0dfb428', domain: 'acme.com' }))
    expect(piiEvents).toHaveLength(1)
    const e = piiEvents[0]!
    expect([e.event, e.platform, e.event_vendor, e.event_name, e.event_format, e.event_version, e.app_id]).toEqual(['pii_transformation', 'srv', 'com.snowplowanalytics.snowplow', 'pii_transformation', 'jsonschema', '1-0-0', good.app_id])
    expect(JSON.parse(e.contexts).data).toEqual([sd('iglu:com.snowplowanalytics.snowplow/parent_event/jsonschema/1-0-0', { parentEventId: good.event_id })])
    expect(JSON.parse(e.unstruct_event).data).toEqual(sd('iglu:com.snowplowanalytics.snowplow/pii_transformation/jsonschema/1-0-0', {
      pii: {
        pojo: [
          { fieldName: 'user_fingerprint', originalValue: 'its_you_again!', modifiedValue: '27abac60dff12792c6088b8d00ce7f25c86b396b8c3740480cd18e21068ecff4' },
          { fieldName: 'user_ipaddress', originalValue: '70.46.123.145', modifiedValue: 'dd9720903c89ae891ed5c74bb7a9f2f90f6487927ac99afe73b096ad0287f3f5' },
          { fieldName: 'user_id', originalValue: 'john@acme.com', modifiedValue: '7d8a4beae5bc9d314600667d2f410918f9af265017a6ade99f60a9c8f3aac6e9' },
        ],
        json: [
          { fieldName: 'contexts', originalValue: 'bob@acme.com', modifiedValue: '1c6660411341411d5431669699149283d10e070224be4339d52bbc4b007e78c5', jsonPath: '$.data.emailAddress2', schema: EMAIL_1_1_0 },
          { fieldName: 'contexts', originalValue: 'jim@acme.com', modifiedValue: '72f323d5359eabefc69836369e4cabc6257c43ab6419b05dfb2211d0e44284c6', jsonPath: '$.emailAddress', schema: EMAIL_1_0_0 },
          { fieldName: 'unstruct_event', originalValue: '50.56.129.169', modifiedValue: '269c433d0cc00395e3bc5fe7f06c5ad822096a38bec2d8a005367b52c0dfb428', jsonPath: '$.ip', schema: CLICKED },
        ],
      },
      strategy: { pseudonymize: { hashFunction: 'SHA-256' } },
    }))
  })

  it('replaces only strings a path finds (and strings in an array it finds), never adds a field, and matches several paths and schemas', async () => {
    const config = pii([
      json('contexts', 'iglu:com.acme/email_sent/jsonschema/1-*-*', '$.count'),
      json('contexts', 'iglu:com.acme/email_sent/jsonschema/1-*-*', '$.cc'),
      json('contexts', 'iglu:com.acme/email_sent/jsonschema/1-*-*', '$.data'),
      json('contexts', 'iglu:com.acme/email_sent/jsonschema/1-*-*', '$.missing'),
      json('contexts', 'iglu:com.acme/email_sent/jsonschema/1-*-*', '$..emailAddress'),
    ])
    const qs = `e=pv&p=web&tv=js-3&co=${cx(sd(EMAIL_1_0_0, { count: 3, cc: ['a@x.io', 7, null], data: { emailAddress: 'deep@x.io' } }), sd(EMAIL_1_1_0, { emailAddress: 'top@x.io' }))}`
    const { good, piiEvents } = await run(config, qs)
    const p = new Pseudonymizer(piiSettings(config.data))
    expect(JSON.parse(good.contexts).data).toEqual([
      sd(EMAIL_1_0_0, { count: 3, cc: [p.scramble('a@x.io'), 7, null], data: { emailAddress: p.scramble('deep@x.io') } }),
      sd(EMAIL_1_1_0, { emailAddress: p.scramble('top@x.io') }),
    ])
    expect(JSON.parse(piiEvents[0]!.unstruct_event).data.data.pii.json.map((j: any) => j.originalValue)).toEqual(['top@x.io', 'deep@x.io', 'a@x.io'])
  })

  it('hashes derived contexts', async () => {
    const cookies = enrichmentConfig('com.snowplowanalytics.snowplow', 'cookie_extractor_config', '1-0-0', { cookies: ['session'] })
    const config = pii([json('derived_contexts', 'iglu:org.ietf/http_cookie/jsonschema/1-*-*', '$.value')], { emitEvent: false })
    const { good, piiEvents } = await run(config, 'e=pv&p=web&tv=js-3', { headers: ['Cookie: session=secret-value'] }, [cookies])
    const p = new Pseudonymizer(piiSettings(config.data))
    expect(derivedOf(good)).toEqual([sd('iglu:org.ietf/http_cookie/jsonschema/1-0-0', { name: 'session', value: p.scramble('secret-value') })])
    expect(piiEvents).toEqual([])
  })

  it('pseudonymises only anonymous requests with anonymousOnly', async () => {
    const config = pii([pojo('user_id')], { anonymousOnly: true })
    expect((await run(config, 'e=pv&p=web&tv=js-3&uid=u1')).good.user_id).toBe('u1')
    const anon = await run(config, 'e=pv&p=web&tv=js-3&uid=u1', { headers: ['SP-Anonymous: *'] })
    expect(anon.good.user_id).toBe(new Pseudonymizer(piiSettings(config.data)).scramble('u1'))
    expect(anon.piiEvents).toHaveLength(1)
  })

  it('emits no pii event when nothing changed', async () => {
    expect((await run(pii([pojo('user_id')]), 'e=pv&p=web&tv=js-3')).piiEvents).toEqual([])
  })

  it('hashes the UTF-8 text of value + salt with each hash function', () => {
    const h = (fn: string, v: string, salt = '') => new Pseudonymizer(piiSettings(pii([], {}, fn, salt).data)).scramble(v)
    expect(h('MD2', 'The quick brown fox jumps over the lazy dog')).toBe('03d85a0d629d2c442e987525319fc471')
    expect(h('MD2', 'abc')).toBe('da853b0d3f88d99b30283a69e6ded6bb')
    expect(h('MD5', 'ab', 'c')).toBe('900150983cd24fb0d6963f7d28e17f72')
    expect(h('SHA-1', 'abc')).toBe('a9993e364706816aba3e25717850c26c9cd0d89d')
    expect(h('SHA-256', 'abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(h('SHA-384', 'abc')).toBe('cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7')
    expect(h('SHA-512', 'abc')).toBe('ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f')
    expect(h('SHA-256', '\u00e9')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c')
  })

  it('refuses what it cannot use', () => {
    expect(() => piiSettings({ parameters: { pii: [json('contexts', 'iglu:com.acme/x/jsonschema/1-*-*', '$[?(@.a')], strategy: { pseudonymize: { hashFunction: 'MD5', salt: '' } } } })).toThrow(/pii\[0\]: .* is not a JSON path/)
    expect(() => piiSettings({ parameters: { pii: [{}], strategy: { pseudonymize: { hashFunction: 'MD5', salt: '' } } } })).toThrow("pii[0] includes neither 'pojo' nor 'json'")
    expect(() => piiSettings({ parameters: { pii: [], strategy: { pseudonymize: { hashFunction: 'CRC32', salt: '' } } } })).toThrow('hashFunction must be one of MD2, MD5, SHA-1, SHA-256, SHA-384, SHA-512')
  })

  it('hashes the anonymised forwarded address, as in Snowplow\'s end-to-end case', async () => {
    const anon = enrichmentConfig('com.snowplowanalytics.snowplow', 'anon_ip', '1-0-0', { anonOctets: 1 })
    const config = pii([pojo('user_id'), pojo('user_ipaddress')], {}, 'SHA-1', 'pink123')
    const { good } = await run(config, 'e=pp&p=web&tv=js-2.0.0', { ipAddress: '255.255.255.255', headers: ['X-Forwarded-For: 123.123.123.123, 345.345.345.345'] }, [anon])
    expect(good.user_ipaddress).toBe('a125dd343866ca654dc79abf258b3971215c59ed')
  })
})
