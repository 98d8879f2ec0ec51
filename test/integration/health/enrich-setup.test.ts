/**
 * An enrichment configuration that cannot be loaded at run time (written to
 * the assets bucket directly, past the check made at start) is not a record
 * failure: enrich's trigger pauses, the records wait in the stream (nothing
 * goes to the on-failure location), /health answers 503 naming it, and once
 * the configuration is fixed the records are enriched.
 */
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3'
import { describe, expect, it } from 'vitest'
import { F } from '../../../lib/core/enrich/fields'
import { enrichmentFiles } from '../../../lib/infra/enrichments'
import { streamTriggerFailureBucket, streamTriggerFailurePrefix } from '../../../lib/infra/functions'
import { eventually } from '../../support/process'
import { testClients, useLocalStack } from '../../support/stack'
import { readTexts } from '../../support/streams'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: 'yes', FLOE_IGLU_CENTRAL_URL: '' } })

const anonIp = (octets: number) =>
  JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/anon_ip/jsonschema/1-0-1', data: { vendor: 'com.snowplowanalytics.snowplow', name: 'anon_ip', enabled: true, parameters: { anonOctets: octets, anonSegments: 1 } } })

describe('enrich with a configuration that fails at run time', () => {
  it('waits without sending records to the on-failure location, /health names it, and resumes once it is fixed', async () => {
    const { s3, kinesis } = testClients()
    const assets = stack.current.names.buckets[enrichmentFiles.bucket]
    const failures = stack.current.names.buckets[streamTriggerFailureBucket]
    // Two anon_ip enrichments: enrich's set-up refuses them.
    for (const [key, octets] of [['anon_ip.json', 1], ['anon_ip_again.json', 2]] as const) {
      await s3.send(new PutObjectCommand({ Bucket: assets, Key: `${enrichmentFiles.prefix}${key}`, Body: anonIp(octets) }))
    }
    expect((await fetch(`${stack.current.url}/i?e=pv&p=web&tv=t-1&aid=waits`)).status).toBe(200)

    // More attempts than the trigger's retries (5) before a batch would be given up on.
    const health = await eventually(async () => {
      const res = await fetch(`${stack.current.url}/health`)
      const text = await res.text()
      const tried = /tried (\d+) times/.exec(text)
      return res.status === 503 && tried && Number(tried[1]) >= 8 ? text : undefined
    }, '/health to name enrich after several attempts', 30_000)
    expect(health).toMatch(/^enrich-raw \(shardId-\d+\) is down since \S+: enrich: configuration cannot be loaded \(tried \d+ times\): .*anon_ip enrichment is configured twice.*; records wait in the stream$/m)
    const onFailure = async () =>
      (await s3.send(new ListObjectsV2Command({ Bucket: failures, Prefix: `${streamTriggerFailurePrefix}enrich-raw/` }))).Contents ?? []
    expect(await onFailure()).toEqual([])

    // Fixed: the waiting record is enriched, nothing was given up on, and /health is ok again.
    await s3.send(new DeleteObjectCommand({ Bucket: assets, Key: `${enrichmentFiles.prefix}anon_ip_again.json` }))
    await eventually(async () => ((await readTexts(kinesis, stack.current.names.streams.good)).some((l) => l.split('\t')[F.app_id] === 'waits') ? true : undefined), 'the record to be enriched', 60_000)
    await eventually(async () => ((await fetch(`${stack.current.url}/health`)).status === 200 ? true : undefined), '/health to answer 200', 30_000)
    expect(await onFailure()).toEqual([])
  }, 120_000)
})
