import { describe, expect, it } from 'vitest'
import { fixEvent, readBadRow, toCollectorPayload, RECOVERY_HEADER } from '../../../lib/core/recover/events'
import { applySteps, parsePath, parseStepsText, type RecoverySteps } from '../../../lib/core/recover/steps'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { encodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'

const UE = (schema: string, data: unknown) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema, data } })
const steps = (doc: unknown): RecoverySteps => {
  const r = parseStepsText(JSON.stringify(doc))
  if (!r.ok) throw new Error(r.errors.join('; '))
  return r.value
}

describe('recovery steps', () => {
  it('refuse documents that do not validate, naming the place', () => {
    const r = parseStepsText(JSON.stringify({ steps: [{ op: 'explode', field: 'aid' }] }))
    expect(r.ok).toBe(false)
    expect(parseStepsText('{').ok).toBe(false)
    const path = parseStepsText(JSON.stringify({ steps: [{ op: 'remove', field: 'ue_pr', path: 'data.x' }] }))
    expect(path).toMatchObject({ ok: false, errors: [expect.stringContaining('/steps/0')] })
    const regex = parseStepsText(JSON.stringify({ steps: [{ op: 'remove', field: 'aid', match: '(?=a)' }] }))
    expect(regex).toMatchObject({ ok: false, errors: [expect.stringContaining('match')] })
    expect(parseStepsText(JSON.stringify({ steps: [{ op: 'renameSchema', from: 'iglu:a/b/jsonschema/1-0-0', to: '1.0.1' }] })).ok).toBe(false)
    expect(parseStepsText('x'.repeat(70_000)).ok).toBe(false)
  })

  it('parse JSON paths', () => {
    expect(parsePath("$.data['a b'][0][*].c")).toEqual([{ key: 'data' }, { key: 'a b' }, { index: 0 }, { all: true }, { key: 'c' }])
    expect(() => parsePath('$..x')).toThrow()
  })

  it('rename a schema version in ue_pr and in base64 cx, replace by path with a match, remove, cast', () => {
    const cx = Buffer.from(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0', data: [{ schema: 'iglu:com.acme/ctx/jsonschema/1-0-0', data: { n: '42', drop: 1 } }] })).toString('base64url')
    const params = new Map<string, string | null>([['aid', 'shop'], ['ue_pr', UE('iglu:com.acme/click/jsonschema/1-0-0', { label: 'Buy', price: 'x' })], ['cx', cx]])
    const r = applySteps(params, steps({
      steps: [
        { op: 'renameSchema', from: 'iglu:com.acme/click/jsonschema/1-0-0', to: '1-0-1' },
        { op: 'renameSchema', from: 'iglu:com.acme/ctx/jsonschema/1-0-0', to: '2-0-0' },
        { op: 'replace', field: 'ue_pr', path: '$.data.data.label', match: '^B', value: 'Sell' },
        { op: 'replace', field: 'ue_pr', path: '$.data.data.price', match: '^never$', value: 1 },
        { op: 'remove', field: 'co', path: '$.data[*].data.drop' },
        { op: 'cast', field: 'cx', path: '$.data[0].data.n', to: 'integer' },
        { op: 'replace', field: 'aid', value: 'shop-2' },
      ],
    }))
    if (!r.ok) throw new Error(r.error)
    expect(r.params.get('aid')).toBe('shop-2')
    expect(JSON.parse(r.params.get('ue_pr')!).data).toEqual({ schema: 'iglu:com.acme/click/jsonschema/1-0-1', data: { label: 'Sell', price: 'x' } })
    expect(r.params.has('co')).toBe(false)
    expect(JSON.parse(Buffer.from(r.params.get('cx')!, 'base64').toString()).data).toEqual([{ schema: 'iglu:com.acme/ctx/jsonschema/2-0-0', data: { n: 42 } }])
    // the original is untouched
    expect(params.get('aid')).toBe('shop')
  })

  it('a value that cannot be cast breaks the event, saying which step', () => {
    const r = applySteps(new Map([['ue_pr', UE('iglu:com.acme/x/jsonschema/1-0-0', { n: 'abc' })]]), steps({ steps: [{ op: 'cast', field: 'ue_px', path: '$.data.data.n', to: 'number' }] }))
    expect(r).toEqual({ ok: false, error: 'step 0 (cast): cannot cast abc to number' })
  })
})

describe('failed events from bad rows', () => {
  const eventId = '6a1c2e4f-0b3d-4c5e-8f70-112233445566'
  const row = {
    schema: 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1',
    data: {
      processor: { artifact: 'floe-enrich', version: '1' },
      failure: { timestamp: '2026-01-01T00:00:01.000Z', messages: [] },
      payload: {
        enriched: { event_id: eventId },
        raw: {
          vendor: 'com.snowplowanalytics.snowplow', version: 'tp2',
          parameters: [{ name: 'e', value: 'ue' }, { name: 'aid', value: 'a' }, { name: 'ue_pr', value: UE('iglu:com.acme/x/jsonschema/1-0-0', {}) }],
          contentType: 'application/json', loaderName: 'c', encoding: 'UTF-8', hostname: 'h', timestamp: '2026-01-01T00:00:00.000Z',
          ipAddress: '10.0.0.1', useragent: 'ua', refererUri: null, headers: ['Host: h', `${RECOVERY_HEADER}: old`], userId: 'f1b3c5d7-0000-4000-8000-000000000001',
        },
      },
    },
  }

  it('replay the parameters as a tp2 payload keeping the original time, request and event id, with the run header', () => {
    const read = readBadRow(JSON.stringify(row))
    if (!read.ok) throw new Error(read.reason)
    const fixed = fixEvent(read.event, steps({ steps: [{ op: 'replace', field: 'aid', value: 'b' }] }))
    if (!fixed.ok) throw new Error(fixed.error)
    const cp = decodeCollectorPayload(encodeCollectorPayload(toCollectorPayload(fixed.event, 'run-1')))
    if (!cp.ok) throw new Error(cp.error)
    expect(cp.payload).toMatchObject({ path: '/com.snowplowanalytics.snowplow/tp2', timestamp: Date.parse('2026-01-01T00:00:00.000Z'), ipAddress: '10.0.0.1', userAgent: 'ua', networkUserId: 'f1b3c5d7-0000-4000-8000-000000000001' })
    expect(cp.payload.headers).toEqual(['Host: h', `${RECOVERY_HEADER}: run-1`])
    expect(JSON.parse(cp.payload.body!).data).toEqual([{ e: 'ue', aid: 'b', ue_pr: UE('iglu:com.acme/x/jsonschema/1-0-0', {}), eid: eventId }])
  })

  it('bad rows without an event say why', () => {
    expect(readBadRow(JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0', data: {} }))).toEqual({ ok: false, reason: 'size_violation bad rows hold no event to replay' })
  })
})
