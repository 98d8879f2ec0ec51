/** /health's answer, and which of enrich's event source mappings a pause disables and a resume enables. */
import { describe, expect, it } from 'vitest'
import { enrichPausedReason, healthAnswer, HEALTH_LINE_MAX, licenceBannerLine, LICENCE_OFF_REASON, mappingsToDisable, mappingsToEnable, type MappingState } from '../../../lib/core/health/report'
import { markDown, markOff, markUp, downDependencies } from '../../../lib/runtime/dependencies'

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

  it('answers 200 for deliberate states, listing them: the instance takes events', () => {
    const a = healthAnswer([{ component: 'enrich-raw', since: 't0', reason: LICENCE_OFF_REASON, state: 'deliberate' }])
    expect(a.status).toBe(200)
    expect(a.body).toBe(`ok\nenrich-raw is off on purpose since t0: ${LICENCE_OFF_REASON}\n`)
  })

  it('answers 503 while any component has a fault, faults first, deliberate states after', () => {
    const a = healthAnswer([
      { component: 'enrich-raw', since: 't0', reason: 'until the licence is accepted', state: 'deliberate' },
      { component: 'dynamodb', since: 't1', reason: 'exited', state: 'fault' },
      { component: 'searchLoader-good', since: 't2', reason: 'cannot write; records wait in the stream' },
    ])
    expect(a.status).toBe(503)
    expect(a.body.split('\n')).toEqual([
      'unavailable',
      'dynamodb is down since t1: exited',
      'searchLoader-good is down since t2: cannot write; records wait in the stream',
      'enrich-raw is off on purpose since t0: until the licence is accepted',
      '',
    ])
  })

  it('the licence line says where to accept it', () => {
    expect(LICENCE_OFF_REASON).toContain('on /home')
    expect(licenceBannerLine('http://127.0.0.1:8080')).toContain('accept it on /home (http://127.0.0.1:8080/home#/control-plane/license)')
    expect(licenceBannerLine('http://127.0.0.1:8080')).toContain('/health answers 200')
  })
})

describe('marked components', () => {
  it('a component marked off is deliberate, one marked down a fault; a change of state starts a new since', () => {
    markOff('t-a', 'paused', new Date('2026-01-01T00:00:00Z'))
    markDown('t-a', 'broke', new Date('2026-01-01T00:01:00Z'))
    markDown('t-a', 'still broken', new Date('2026-01-01T00:02:00Z'))
    expect(downDependencies().find((d) => d.component === 't-a')).toEqual({ component: 't-a', since: '2026-01-01T00:01:00.000Z', reason: 'still broken', state: 'fault' })
    markOff('t-a', 'paused', new Date('2026-01-01T00:03:00Z'))
    expect(downDependencies().find((d) => d.component === 't-a')).toMatchObject({ since: '2026-01-01T00:03:00.000Z', state: 'deliberate' })
    markUp('t-a')
    expect(downDependencies().find((d) => d.component === 't-a')).toBeUndefined()
  })
})
