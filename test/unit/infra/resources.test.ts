import { describe, expect, it } from 'vitest'
import { envVar, localName, localNames, resourceEnvironment, streams } from '../../../lib/infra/resources'
import { functions, streamTriggerDefaults, streamTriggers, triggerSettings } from '../../../lib/infra/functions'
import { compileRoutes } from '../../../lib/local/gateway'

describe('the infrastructure declaration', () => {
  it('names environment variables and local resources from the declaration keys', () => {
    expect(envVar('table', 'eventSpecs')).toBe('FLOE_TABLE_EVENT_SPECS')
    expect(envVar('stream', 'raw')).toBe('FLOE_STREAM_RAW')
    expect(localName('specHistory')).toBe('floe-spec-history')
    expect(localName('apiKeys', 't1')).toBe('t1-api-keys')
    const env = resourceEnvironment(localNames('x'))
    expect(env.FLOE_TABLE_SCHEMAS).toBe('x-schemas')
    expect(env.FLOE_BUCKET_ARCHIVE).toBe('x-archive')
  })

  it('gives every trigger the defaults unless it overrides them', () => {
    for (const t of streamTriggers) {
      const s = triggerSettings(t)
      expect(s.reportBatchItemFailures).toBe(streamTriggerDefaults.reportBatchItemFailures)
      expect(s.bisectBatchOnError).toBe(true)
      expect(s.batchSize).toBe('batchSize' in t ? t.batchSize : streamTriggerDefaults.batchSize)
      expect(Object.keys(streams)).toContain(t.stream)
      expect(Object.keys(functions)).toContain(t.function)
    }
  })

  it('has routes that compile without conflicts, with at most one $default', () => {
    const table = compileRoutes()
    const keys = table.routes.map((r) => r.routeKey)
    expect(new Set(keys).size).toBe(keys.length)
  })
})
