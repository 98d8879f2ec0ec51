/**
 * Enrichment configuration files through the stack: deployed from a
 * directory to the assets bucket at start, read by the enrich function,
 * and refused at start with the file and the reason when unusable.
 */
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { F } from '../../../lib/core/enrich/fields'
import { startLocalStack } from '../../../lib/local/stack'
import { projectRoot } from '../../../lib/local/handlers'
import { sharedEndpoints, testClients, uniquePrefix, useLocalStack } from '../../support/stack'
import { readTexts } from '../../support/streams'

const dir = mkdtempSync(join(tmpdir(), 'floe-enrichments-'))
cpSync(join(projectRoot, 'enrichments'), dir, { recursive: true })
const stack = useLocalStack({ enrichmentsDir: dir, environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

describe('enrichments in the stack', () => {
  it('runs the configured enrichments on every event', async () => {
    const res = await fetch(`${stack.current.url}/i?e=pv&p=web&tv=js-3&aid=enriched&url=${encodeURIComponent('https://shop.example/?utm_source=news')}`)
    expect(res.status).toBe(200)
    await stack.current.drain()
    const good = (await readTexts(testClients().kinesis, stack.current.names.streams.good)).map((l) => l.split('\t'))
    const [event] = good.filter((c) => c[F.app_id] === 'enriched')
    expect(event![F.event_fingerprint]).toMatch(/^[0-9a-f]{32}$/)
  })

  it('refuses to start with an unusable configuration file, naming it', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'floe-enrichments-bad-'))
    writeFileSync(join(bad, 'ua.json'), JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/user_agent_utils_config/jsonschema/1-0-0', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'user_agent_utils_config', enabled: true, parameters: {} } }))
    await expect(startLocalStack({ endpoints: sharedEndpoints(), namePrefix: uniquePrefix(), triggers: false, enrichmentsDir: bad }))
      .rejects.toThrow(/ua\.json: the user-agent-utils enrichment was removed/)
  })
})
