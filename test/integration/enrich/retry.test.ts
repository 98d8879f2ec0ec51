/**
 * The one failure enrich still retries is a stream write. Lambda retries a
 * batch from its first failed record; the records after it that were written
 * are neither enriched nor written again by the same instance.
 */
import { CreateStreamCommand, waitUntilStreamExists } from '@aws-sdk/client-kinesis'
import { describe, expect, it } from 'vitest'
import { createRuntime, processBatch } from '../../../lib/aws/enrich-kinesis'
import { validateConfig } from '../../../lib/core/enrich/config'
import { defaultResolver } from '../../../lib/runtime/default-resolver'
import { payload, tp2 } from '../../unit/enrich/helpers'
import { testClients, uniquePrefix } from '../../support/stack'
import { readTexts } from '../../support/streams'

describe('enrich on Kinesis: a failed stream write', () => {
  it('fails only the records whose outputs were not written, and a retried batch writes nothing twice', async () => {
    const { kinesis } = testClients()
    const p = uniquePrefix('retry')
    const names = { good: `${p}-good`, incomplete: `${p}-incomplete`, bad: `${p}-bad` }
    for (const s of [names.good, names.incomplete]) {
      await kinesis.send(new CreateStreamCommand({ StreamName: s, ShardCount: 1 }))
      await waitUntilStreamExists({ client: kinesis, maxWaitTime: 30, minDelay: 0.05, maxDelay: 0.2 }, { StreamName: s })
    }
    const config = validateConfig({
      license: { accept: true },
      input: { streamName: 'raw' },
      output: {
        good: { streamName: names.good },
        incomplete: { streamName: names.incomplete },
        bad: { streamName: names.bad, backoffPolicy: { maxRetries: 0 } },
      },
    })
    if (!config.ok) throw new Error(config.errors.join('; '))
    const rt = createRuntime(config.config, { kinesis, resolver: defaultResolver({ env: { FLOE_IGLU_CENTRAL_URL: '' } }), log: () => {} })
    const pv = (page: string) => tp2(`e=pv&p=web&tv=js-3&aid=retry&page=${page}`)
    const records = [
      { id: '1', data: pv('one') },
      { id: '2', data: payload({ path: '/com.acme/v9', querystring: 'e=pv' }) }, // a bad row: its stream does not exist yet
      { id: '3', data: pv('three') },
      { id: '4', data: pv('four') },
    ]
    const first = await processBatch(rt, records)
    expect(first.failed).toEqual(['2'])
    expect(await readTexts(kinesis, names.good)).toHaveLength(3)

    // Lambda retries from the failed record on; the bad stream is back.
    await kinesis.send(new CreateStreamCommand({ StreamName: names.bad, ShardCount: 1 }))
    await waitUntilStreamExists({ client: kinesis, maxWaitTime: 30, minDelay: 0.05, maxDelay: 0.2 }, { StreamName: names.bad })
    const retry = await processBatch(rt, records.slice(1))
    expect(retry).toMatchObject({ failed: [], skipped: ['3', '4'] })
    expect(retry.outcomes).toHaveLength(1)
    const good = await readTexts(kinesis, names.good)
    expect(good).toHaveLength(3)
    expect(await readTexts(kinesis, names.bad)).toHaveLength(1)
  })
})
