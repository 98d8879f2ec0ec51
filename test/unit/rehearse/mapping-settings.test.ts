import { describe, expect, it } from 'vitest'
import type { Trigger } from '../../../lib/core/rehearse/inventory'
import { mappingSettings, streamNameOf } from '../../../lib/local/rehearse/triggers'

const trigger = (o: Partial<Trigger> = {}): Trigger => ({ logicalId: 'M', source: 'arn:aws:kinesis:us-east-1:000000000000:stream/raw', kind: 'kinesis', enabled: true, bisectOnError: false, reportBatchItemFailures: false, ...o })

describe('event source mapping settings from the template', () => {
  it('takes Lambda\'s defaults where the template says nothing: 100 records, no window, retries and record age unbounded', () => {
    expect(mappingSettings(trigger())).toEqual({ batchSize: 100, maxBatchingWindowSeconds: 0, startingPosition: 'TRIM_HORIZON', reportBatchItemFailures: false, bisectBatchOnError: false, retryAttempts: -1, maxRecordAgeSeconds: -1, parallelizationFactor: 1 })
  })

  it('takes every setting the template gives', () => {
    expect(mappingSettings(trigger({ batchSize: 500, maxBatchingWindowSeconds: 5, startingPosition: 'LATEST', bisectOnError: true, reportBatchItemFailures: true, maxRetryAttempts: 2, maxRecordAgeSeconds: 60, parallelizationFactor: 3 }))).toEqual({ batchSize: 500, maxBatchingWindowSeconds: 5, startingPosition: 'LATEST', reportBatchItemFailures: true, bisectBatchOnError: true, retryAttempts: 2, maxRecordAgeSeconds: 60, parallelizationFactor: 3 })
  })

  it('reads the stream name from its ARN', () => {
    expect(streamNameOf('arn:aws:kinesis:eu-west-1:1:stream/FloeData-RawStream-X')).toBe('FloeData-RawStream-X')
    expect(streamNameOf('arn:aws:sqs:eu-west-1:1:q')).toBeUndefined()
  })
})

describe('SQS mappings', () => {
  it('go to the SQS trigger given, which invokes the function through the host (its error thrown); without one they are skipped', async () => {
    const { startMappings } = await import('../../../lib/local/rehearse/triggers')
    const sqs = trigger({ logicalId: 'Q', source: 'arn:aws:sqs:us-east-1:000000000000:work.fifo', kind: 'sqs', batchSize: 1 })
    const fn = { stack: 'S', logicalId: 'Worker', name: 'Worker', arn: '', memoryMb: 128, timeoutSeconds: 3, environment: {}, triggers: [sqs], routes: [], problems: [] }
    const calls: unknown[] = []
    const host = { invoke: async (id: string, event: unknown) => (calls.push([id, event]), (event as { fail?: boolean }).fail ? { ok: false as const, error: { errorType: 'Boom', errorMessage: 'no' }, ms: 0 } : { ok: true as const, result: 'done', ms: 0 }) }
    const none = await startMappings({ functions: [fn], host, kinesis: {} as never, s3: {} as never })
    expect(none.skipped).toEqual([{ logicalId: 'Q', function: 'Worker', reason: 'sqs source: no SQS trigger given' }])
    let stopped = false
    const seen: unknown[] = []
    const running = await startMappings({
      functions: [fn], host, kinesis: {} as never, s3: {} as never,
      startQueueTrigger: async (t, f, invoke) => {
        seen.push([t.logicalId, t.batchSize, f.logicalId, await invoke({ Records: [] })])
        await expect(invoke({ fail: true })).rejects.toMatchObject({ name: 'Boom', message: 'no' })
        return { stop: async () => { stopped = true } }
      },
    })
    expect(running.started).toEqual([{ logicalId: 'Q', function: 'Worker', stream: 'arn:aws:sqs:us-east-1:000000000000:work.fifo' }])
    expect(seen).toEqual([['Q', 1, 'Worker', 'done']])
    expect(calls).toHaveLength(2)
    await running.stop()
    expect(stopped).toBe(true)
  })
})
