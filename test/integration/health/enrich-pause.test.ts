/**
 * Enrich's pause as on AWS, against the emulators: with a configuration that
 * cannot be loaded, the enrich handler records why in the settings table and
 * disables its own event source mapping (through the Lambda API's port: a
 * fake here, Lambda is not emulated); /health answers 503 naming it; once
 * the file is fixed, `restart-service enrich` clears it.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createEnrichHandler } from '../../../functions/enrich/handler'
import type { MappingControl } from '../../../lib/aws/enrich-pause'
import type { MappingState } from '../../../lib/core/health/report'
import { enrichmentFiles } from '../../../lib/infra/enrichments'
import { eventually } from '../../support/process'
import { testClients, useLocalStack, withAuth } from '../../support/stack'

const stack = useLocalStack({ triggers: false, environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })
afterAll(() => vi.unstubAllEnvs())

const anonIp = (octets: number) =>
  JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/anon_ip/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'anon_ip', enabled: true, parameters: { anonOctets: octets, anonSegments: 1 } } })

/** The Lambda API's mappings, in memory: calls are recorded. */
function fakeMappings(mappings: MappingState[]): MappingControl & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    async list(functionName) {
      calls.push(`list ${functionName}`)
      return mappings
    },
    async setEnabled(uuid, enabled) {
      calls.push(`${enabled ? 'enable' : 'disable'} ${uuid}`)
    },
  }
}

describe('enrich paused by a set-up failure (AWS)', () => {
  it('records why, disables its own mapping, /health names it, and a restart of enrich clears it', async () => {
    const { s3, ddb } = testClients()
    const names = stack.current.names
    const assets = names.buckets[enrichmentFiles.bucket]
    for (const [key, octets] of [['anon_ip.json', 1], ['anon_ip_again.json', 2]] as const) {
      await s3.send(new PutObjectCommand({ Bucket: assets, Key: `${enrichmentFiles.prefix}${key}`, Body: anonIp(octets) }))
    }
    const raw = `arn:aws:kinesis:us-east-1:000000000000:stream/${names.streams.raw}`
    const mappings = fakeMappings([
      { uuid: 'raw-mapping', eventSourceArn: raw, state: 'Enabled' },
      { uuid: 'good-mapping', eventSourceArn: `arn:aws:kinesis:us-east-1:000000000000:stream/${names.streams.good}`, state: 'Enabled' },
    ])
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'FloeApp-EnrichFunction-1')
    const handler = createEnrichHandler({ mappings })
    const record = { kinesis: { sequenceNumber: '1', data: Buffer.from('x').toString('base64') } }
    await expect(handler({ Records: [record] } as never)).rejects.toMatchObject({ name: 'EnrichSetupError' })
    vi.unstubAllEnvs()

    expect(mappings.calls).toEqual(['list FloeApp-EnrichFunction-1', 'disable raw-mapping'])
    const item = await ddb.send(new GetItemCommand({ TableName: names.tables.settings, Key: { pk: { S: 'health' }, sk: { S: 'enrich-setup' } }, ConsistentRead: true }))
    expect(item.Item?.reason?.S).toMatch(/anon_ip enrichment is configured twice/)

    const res = await fetch(`${stack.current.url}/health`)
    const body = await res.text()
    expect(res.status).toBe(503)
    expect(body).toMatch(/^enrich-raw is down since \S+: enrich is paused: configuration cannot be loaded: .*anon_ip enrichment is configured twice.*; records wait in the stream$/m)

    // Fixed, then enrich restarted through the control plane: the record is cleared (no mapping to enable locally).
    await s3.send(new DeleteObjectCommand({ Bucket: assets, Key: `${enrichmentFiles.prefix}anon_ip_again.json` }))
    const restart = await fetch(`${stack.current.url}/control-plane/restart-service`, {
      method: 'PUT',
      headers: withAuth({ 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }),
      body: 'service_name=enrich',
    })
    expect(restart.status).toBe(200)
    expect((await ddb.send(new GetItemCommand({ TableName: names.tables.settings, Key: { pk: { S: 'health' }, sk: { S: 'enrich-setup' } }, ConsistentRead: true }))).Item).toBeUndefined()
    // /health reads the settings table at most every few seconds
    await eventually(async () => ((await fetch(`${stack.current.url}/health`)).status === 200 ? true : undefined), '/health to answer 200', 30_000)
  }, 120_000)
})
