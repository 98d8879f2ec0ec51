import { PutRecordsCommand } from '@aws-sdk/client-kinesis'
import { describe, expect, it } from 'vitest'
import { runTail } from '../../../lib/cli/tail'
import { testClients, useLocalStack } from '../../support/stack'

const stack = useLocalStack({ triggers: false })

describe('floe tail good --json', () => {
  it('prints enriched events shredded', async () => {
    const cols = Array<string>(131).fill('')
    cols[0] = 'tail-app'; cols[3] = '2025-04-30 10:00:00.000'; cols[6] = 'c6ef3124-b53a-4b13-a233-0088f79dcbcb'; cols[10] = 'c'; cols[11] = 'floe-enrich-0.1.0'
    cols[52] = '{"schema":"iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1","data":[{"schema":"iglu:com.acme/my_ctx/jsonschema/1-0-0","data":{"a":1}}]}'
    const kinesis = testClients().kinesis
    await kinesis.send(new PutRecordsCommand({ StreamName: stack.current.names.streams.good, Records: [{ PartitionKey: 'k', Data: Buffer.from(cols.join('\t')) }] }))
    const lines: string[] = []
    await runTail(['good', '--from-start', '--count', '1', '--json'], { out: (l) => lines.push(l), kinesis, streamName: stack.current.names.streams.good, pollMs: 20 })
    const doc = JSON.parse(lines[0]!)
    expect(doc).toMatchObject({ app_id: 'tail-app', collector_tstamp: '2025-04-30T10:00:00Z', v_etl: 'floe-enrich-0.1.0', contexts_com_acme_my_ctx_1: [{ a: 1 }], platform: null })
  })
})
