/** /health's answer, and which of enrich's event source mappings a pause disables and a resume enables. */
import { describe, expect, it } from 'vitest'
import { enrichPausedReason, healthAnswer, HEALTH_LINE_MAX, mappingsToDisable, mappingsToEnable, type MappingState } from '../../../lib/core/health/report'

const stream = 'arn:aws:kinesis:eu-west-1:123456789012:stream/FloeData-RawStream-ABC'
const mappings: MappingState[] = [
  { uuid: 'on', eventSourceArn: stream, state: 'Enabled' },
  { uuid: 'fan-out', eventSourceArn: `${stream}/consumer/FloeApp-enrich-raw:1700000000`, state: 'Enabled' },
  { uuid: 'off', eventSourceArn: stream, state: 'Disabled' },
  { uuid: 'other', eventSourceArn: `${stream}2`, state: 'Enabled' },
  { uuid: 'other-off', eventSourceArn: 'arn:aws:kinesis:eu-west-1:123456789012:stream/FloeData-GoodStream-X', state: 'Disabled' },
  { uuid: 'sqs', eventSourceArn: 'arn:aws:sqs:eu-west-1:123456789012:FloeData-RawStream-ABC', state: 'Enabled' },
]

describe('enrich pause decisions', () => {
  it('disables the enabled mappings on the raw stream, polling or through a consumer, and no other', () => {
    expect(mappingsToDisable(mappings, 'FloeData-RawStream-ABC')).toEqual(['on', 'fan-out'])
  })

  it('enables only the disabled mappings on the raw stream', () => {
    expect(mappingsToEnable(mappings, 'FloeData-RawStream-ABC')).toEqual(['off'])
  })

  it('words the paused line on one line', () => {
    expect(enrichPausedReason('anon_ip enrichment\nis configured twice')).toBe('enrich is paused: configuration cannot be loaded: anon_ip enrichment is configured twice; records wait in the stream')
  })
})

describe('healthAnswer', () => {
  it('answers ok without causes', () => {
    expect(healthAnswer([])).toEqual({ status: 200, body: 'ok' })
  })

  it('answers 503 with one line per cause, each cut', () => {
    const a = healthAnswer([
      { component: 'enrich-raw', since: '2026-01-01T00:00:00.000Z', reason: 'enrich is off' },
      { component: 'x', since: 's', reason: 'y'.repeat(1000) },
    ])
    expect(a.status).toBe(503)
    const lines = a.body.split('\n')
    expect(lines[0]).toBe('unavailable')
    expect(lines[1]).toBe('enrich-raw is down since 2026-01-01T00:00:00.000Z: enrich is off')
    expect(lines[2]).toHaveLength(HEALTH_LINE_MAX)
  })
})
