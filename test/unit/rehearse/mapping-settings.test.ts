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
