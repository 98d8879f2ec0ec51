/**
 * `npm start` with FLOE_ENRICHMENTS_DIR: the common production set runs on
 * an event sent to the collector, and `floe tail good --json` shows the
 * enriched fields and contexts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { EndpointsFile } from '../../../lib/local/cli-start'
import { ENRICHABLE, productionEnrichments } from '../../support/enrichments'
import { floe, killOrphanDynamo, runFloe, type Running } from '../../support/process'

const dataDir = mkdtempSync(join(tmpdir(), 'floe-start-enrichments-'))
let proc: Running | undefined

afterAll(async () => {
  if (proc && proc.child.exitCode === null) {
    proc.child.kill('SIGTERM')
    await proc.exited
  }
  killOrphanDynamo(dataDir)
  rmSync(dataDir, { recursive: true, force: true })
})

describe('floe start with FLOE_ENRICHMENTS_DIR', () => {
  it('enriches events with the configured set, and floe tail good --json shows them', async () => {
    const env = { FLOE_DATA_DIR: dataDir, PORT: '0', ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '', FLOE_ENRICHMENTS_DIR: productionEnrichments().dir }
    proc = floe(['start'], env)
    await proc.waitFor('Floe is up')
    const ep = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as EndpointsFile
    expect((await fetch(`${ep.http}/i?${ENRICHABLE.query}`, { headers: ENRICHABLE.headers })).status).toBe(200)
    const tail = await runFloe(['tail', 'good', '--json', '--from-start', '--count', '1'], { FLOE_DATA_DIR: dataDir })
    expect(tail.code, tail.stderr).toBe(0)
    const e = JSON.parse(tail.stdout.trim())
    expect(e).toMatchObject({
      app_id: 'enriched', user_ipaddress: '175.16.199.x', geo_country: 'CN', geo_city: 'Changchun',
      refr_medium: 'search', refr_source: 'Google', refr_term: 'floe pipeline', mkt_source: 'news', mkt_medium: 'email', mkt_campaign: 'spring',
    })
    expect(e.event_fingerprint).toMatch(/^[0-9a-f]{32}$/)
    expect(e.contexts_com_snowplowanalytics_snowplow_ua_parser_context_1).toEqual([expect.objectContaining({ useragentFamily: 'Chrome', osFamily: 'Windows' })])
    expect(e.contexts_nl_basjes_yauaa_context_1).toEqual([expect.objectContaining({ deviceClass: 'Desktop', agentNameVersionMajor: 'Chrome 120' })])
  }, 180_000)
})
