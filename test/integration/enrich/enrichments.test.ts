/**
 * Enrichment configuration files through the stack: deployed from a
 * directory to the assets bucket at start, read by the enrich function,
 * and refused at start with the file and the reason when unusable.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { F } from '../../../lib/core/enrich/fields'
import { startLocalStack } from '../../../lib/local/stack'
import { ENRICHABLE, productionEnrichments } from '../../support/enrichments'
import { sharedEndpoints, testClients, uniquePrefix, useLocalStack } from '../../support/stack'
import { readTexts } from '../../support/streams'

const set = productionEnrichments()
const stack = useLocalStack({ enrichmentsDir: set.dir, environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

describe('enrichments in the stack', () => {
  it('runs the common production set on every event', async () => {
    const res = await fetch(`${stack.current.url}/i?${ENRICHABLE.query}`, { headers: ENRICHABLE.headers })
    expect(res.status).toBe(200)
    await stack.current.drain()
    const good = (await readTexts(testClients().kinesis, stack.current.names.streams.good)).map((l) => l.split('\t'))
    const [c] = good.filter((x) => x[F.app_id] === 'enriched')
    expect(c![F.event_fingerprint]).toMatch(/^[0-9a-f]{32}$/)
    expect([c![F.user_ipaddress], c![F.geo_country], c![F.geo_city], c![F.geo_timezone]]).toEqual(['175.16.199.x', 'CN', 'Changchun', 'Asia/Harbin'])
    expect([c![F.refr_medium], c![F.refr_source], c![F.refr_term]]).toEqual(['search', 'Google', 'floe pipeline'])
    expect([c![F.mkt_source], c![F.mkt_medium], c![F.mkt_campaign]]).toEqual(['news', 'email', 'spring'])
    const derived = JSON.parse(c![F.derived_contexts]!).data.map((d: { schema: string }) => d.schema)
    expect(derived).toEqual(expect.arrayContaining([
      'iglu:com.snowplowanalytics.snowplow/ua_parser_context/jsonschema/1-0-0',
      'iglu:nl.basjes/yauaa_context/jsonschema/1-0-5',
      'iglu:org.ietf/http_cookie/jsonschema/1-0-0',
    ]))
  })

  it('refuses to start with an unusable configuration file, naming it', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'floe-enrichments-bad-'))
    writeFileSync(join(bad, 'ua.json'), JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/user_agent_utils_config/jsonschema/1-0-0', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'user_agent_utils_config', enabled: true, parameters: {} } }))
    await expect(startLocalStack({ endpoints: sharedEndpoints(), namePrefix: uniquePrefix(), triggers: false, enrichmentsDir: bad }))
      .rejects.toThrow(/ua\.json: the user-agent-utils enrichment was removed/)
  })
})
