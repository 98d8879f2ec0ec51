/**
 * The search loader never gives up on a record: locally its triggers retry
 * for ever, with no record age; on AWS they retry for as long as the stream
 * keeps the records and no longer, so a record is never silently expired by
 * the stream but sent to the on-failure destination (watched by an alarm).
 */
import { describe, expect, it } from 'vitest'
import { localTriggerSettings, streamTriggers, triggerSettings } from '../../../lib/infra/functions'
import { streams } from '../../../lib/infra/resources'

describe('the search loader’s triggers', () => {
  const loaders = streamTriggers.filter((t) => t.function === 'searchLoader')

  it('read raw, good, incomplete and bad', () => {
    expect(loaders.map((t) => t.stream).sort()).toEqual(['bad', 'good', 'incomplete', 'raw'])
  })

  it('locally retry for ever: no retry limit, no maximum record age', () => {
    for (const t of loaders) expect(localTriggerSettings(t)).toMatchObject({ retryAttempts: -1, maxRecordAgeSeconds: -1 })
  })

  it('on AWS retry until an hour before the stream would expire the records, then go to the on-failure destination', () => {
    for (const t of loaders) {
      const s = triggerSettings(t)
      expect(s.retryAttempts).toBe(10_000) // Lambda's most
      expect(s.maxRecordAgeSeconds).toBeGreaterThan(0)
      expect(s.maxRecordAgeSeconds).toBeLessThanOrEqual((streams[t.stream].retentionHours - 1) * 3600)
    }
  })

  it('every other trigger has a record age under its stream’s retention, and the same settings locally', () => {
    for (const t of streamTriggers) {
      const s = triggerSettings(t)
      expect(s.maxRecordAgeSeconds).toBeLessThan(streams[t.stream].retentionHours * 3600)
      // enrich, locally: no batching window (an invocation costs nothing there, and the window delays every event)
      if (t.function === 'enrich') expect(localTriggerSettings(t)).toEqual({ ...s, maxBatchingWindowSeconds: 0 })
      else if (t.function !== 'searchLoader') expect(localTriggerSettings(t)).toEqual(s)
    }
  })

  it('enrich waits for no batching window locally, and keeps Lambda’s default of 1 s on AWS', () => {
    const enrich = streamTriggers.find((t) => t.function === 'enrich')!
    expect(triggerSettings(enrich).maxBatchingWindowSeconds).toBe(1)
    expect(localTriggerSettings(enrich).maxBatchingWindowSeconds).toBe(0)
  })
})
