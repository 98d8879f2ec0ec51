/**
 * The synthesized assembly's search loader, run from its bundle by the
 * rehearsal with the search store stood in (a private PGlite behind the
 * local RDS Data API): its mapping on the good stream runs, the function
 * reaches the stand-in through `AWS_ENDPOINT_URL_RDS_DATA` with the cluster
 * and secret ARNs its template gives it, migrates the store on its first
 * statement as on AWS, and an enriched event put on the stream lands in the
 * store. (One synthesis, with bundling, for the file.)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PutRecordCommand } from '@aws-sdk/client-kinesis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { synthesize } from '../../../lib/cli/rehearse'
import { readAssembly } from '../../../lib/cli/rehearse-sources'
import { MIGRATIONS } from '../../../lib/core/search/store'
import { runAssembly } from '../../../lib/local/rehearse/run'
import { postgresClient } from '../../../lib/runtime/postgres'
import { sharedEndpoints, testClients, uniquePrefix } from '../../support/stack'
import { batch, enricher, payload } from '../../unit/enrich/helpers'

describe('the rehearsal with the search store stood in', { timeout: 240_000 }, () => {
  const endpoints = sharedEndpoints()
  const credentials = () => ({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })
  let dir: string

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'floe-rehearse-search-'))
    await synthesize(dir, () => {})
    // every mapping without a batching window in the copy, so draining them does not wait a minute
    for (const file of ['FloeData.template.json', 'FloeApp.template.json']) {
      const template = JSON.parse(readFileSync(join(dir, file), 'utf8'))
      for (const r of Object.values<{ Type: string; Properties: Record<string, unknown> }>(template.Resources)) {
        if (r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.MaximumBatchingWindowInSeconds !== undefined) r.Properties.MaximumBatchingWindowInSeconds = 0
      }
      writeFileSync(join(dir, file), JSON.stringify(template))
    }
  }, 600_000)
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('the search loader runs from its bundle: an enriched event put on the good stream is in the store, read back with SQL', async () => {
    const prefix = uniquePrefix('S')
    const stacks = readAssembly(dir).stacks.map((s) => ({ ...s, name: `${prefix}${s.name}` }))
    const lines: string[] = []
    const run = await runAssembly({ dir, stacks, clients: testClients(), endpoints: { dynamodb: endpoints.dynamodb, kinesis: endpoints.kinesis, s3: endpoints.s3 }, credentials, pollIntervalMs: 100, searchStore: {}, log: (l) => lines.push(l) })
    const sql = postgresClient(run.searchStore!.postgresUrl)
    try {
      const loader = run.functions.find((f) => f.logicalId.startsWith('SearchLoaderFunction'))!
      // the stand-in answers for the cluster and secret the loader's template gives it
      const given = JSON.parse(loader.environment.FLOE_DATABASE_SEARCH!) as { resourceArn: string; secretArn: string }
      expect([run.searchStore!.clusterArn, run.searchStore!.secretArn]).toEqual([given.resourceArn, given.secretArn])
      expect(given.secretArn).toMatch(/^arn:aws:secretsmanager:/)
      // its mappings run now
      expect(run.mappings!.skipped.filter((m) => m.function === loader.logicalId)).toEqual([])
      const good = run.plan.streams.find((s) => /GoodStream/.test(s.logicalId))!
      expect(run.mappings!.started).toContainEqual({ logicalId: expect.any(String), function: loader.logicalId, stream: good.name })

      // collected now: the loader's retention purge keeps it
      const o = await enricher().enrichRecord(payload({ path: '/i', querystring: 'e=se&p=web&tv=js-3&aid=rehearsed&se_ca=cat&se_ac=stood-in', timestamp: Date.now() }), batch())
      const tsv = (o.outputs.find((x) => x.kind === 'good') as { tsv: string }).tsv
      await testClients().kinesis.send(new PutRecordCommand({ StreamName: good.name, PartitionKey: 'k', Data: Buffer.from(tsv) }))
      await run.mappings!.drain()

      const migrations = await sql.query<{ version: number }>('SELECT version FROM public.search_schema_migrations ORDER BY version')
      expect(migrations.rows.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version))
      const rows = await sql.query<{ app_id: string; event_type: string }>('SELECT app_id, event_type FROM public.good_events')
      expect(rows.rows, lines.join('\n')).toEqual([{ app_id: 'rehearsed', event_type: 'struct' }])
      const count = run.report().find((c) => c.logicalId === loader.logicalId)!
      expect(count.invocations).toBeGreaterThan(0)
      expect(count.errors, lines.filter((l) => l.startsWith(loader.logicalId)).join('\n')).toBe(0)
      expect(run.searchStore!.openTransactions()).toBe(0)
    } finally {
      await sql.close()
      await run.stop()
    }
  })
})
