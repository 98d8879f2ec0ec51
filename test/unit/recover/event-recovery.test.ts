import { describe, expect, it } from 'vitest'
import { applyRecoveryStep, castValue, holds, recoverRow, thriftBytes } from '../../../lib/core/recover/event-recovery/apply'
import { parseEventRecoveryConfig, type RecoveryConfig } from '../../../lib/core/recover/event-recovery/config'
import { parsePath, read, update } from '../../../lib/core/recover/event-recovery/jsonpath'
import { parseRecoveryDocument } from '../../../lib/core/recover/document'
import { parseRecoverRequest } from '../../../lib/core/recover/api'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { recoverLine } from '../../../lib/core/recover/event-recovery/offline'
import { parseShareMessage } from '../../../lib/core/recover/worker'
import { compileSelfDescribing, readSchema } from '../../../lib/core/collector/config'

const SV = 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-0'
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64')

function config(data: Record<string, unknown>, version = '4-0-0'): RecoveryConfig {
  const c = parseEventRecoveryConfig({ schema: `iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/${version}`, data })
  if (!c.ok) throw new Error(c.errors.join('\n'))
  return c.value
}

function svRow(params: Record<string, string>, extra: Record<string, unknown> = {}) {
  return {
    schema: SV,
    data: {
      processor: { artifact: 'snowplow-enrich-kinesis', version: '3.7.0' },
      failure: { timestamp: '2024-01-01T00:00:00Z', messages: [{ schemaKey: 'iglu:com.acme/x/jsonschema/1-0-0' }] },
      payload: {
        enriched: { app_id: 'shop' },
        raw: { vendor: 'com.snowplowanalytics.snowplow', version: 'tp2', parameters: Object.entries(params).map(([name, value]) => ({ name, value })), timestamp: '2024-01-01T00:00:00Z', ipAddress: '1.2.3.4', headers: [], userId: 'u-1' },
      },
      ...extra,
    },
  }
}

/** A parameter of a recovered raw event (replayed as a GET: its query string). */
const paramOf = (r: ReturnType<typeof recoverRow>, name: string) => (r.ok && r.value.kind === 'event' && r.value.event.kind === 'payload' ? r.value.event.querystring.get(name) : undefined)

const ue = (schema: string, data: unknown) => JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0', data: { schema, data } })

describe('JSONPath subset', () => {
  const doc = {
    a: { b: [{ name: 'x', v: 1 }, { name: 'y', v: 2 }] },
    parameters: [
      { name: 'e', value: 'ue' },
      { name: 'ue_pr', value: ue('iglu:com.acme/e/jsonschema/1-0-0', { n: 1 }) },
      { name: 'cx', value: b64({ schema: 'c', data: [{ schema: 'iglu:com.acme/ctx/jsonschema/1-0-0', data: { id: 'i1' } }] }) },
    ],
  }
  it('reads names, indexes, dotted and plain brackets, filters', () => {
    expect(read(doc, parsePath('$.a.b[1].v').segments)).toEqual([2])
    expect(read(doc, parsePath('$.a.b.[0].name').segments)).toEqual(['x'])
    expect(read(doc, parsePath("$['a'].b[?(@.name=~y)].v").segments)).toEqual([2])
    expect(read(doc, parsePath('$.a.b.[?(@.name=~x|y)].v').segments)).toEqual([1, 2])
    // the filter's regex matches the whole value
    expect(read(doc, parsePath('$.a.b.[?(@.name=~x.)].v').segments)).toEqual([])
  })
  it('reads a name-value list by name, and JSON and base64 JSON inside strings', () => {
    expect(read(doc, parsePath('$.parameters.e').segments)).toEqual(['ue'])
    expect(read(doc, parsePath('$.parameters.ue_pr.data.data.n').segments)).toEqual([1])
    expect(read(doc, parsePath('$.parameters.[?(@.name=~ue_pr)].value.data.schema').segments)).toEqual(['iglu:com.acme/e/jsonschema/1-0-0'])
    expect(read(doc, parsePath('$.parameters.cx.data.[?(@.schema=~iglu:com.acme/ctx/jsonschema/1-0-0)].data.id').segments)).toEqual(['i1'])
  })
  it('writes back inside encoded strings, with the same encoding', () => {
    const out = update(doc, parsePath('$.parameters.cx.data[0].data.id'), () => 'i2') as typeof doc
    const cx = out.parameters[2]!.value
    expect(JSON.parse(Buffer.from(cx, 'base64').toString()).data[0].data.id).toBe('i2')
    const out2 = update(doc, parsePath('$.parameters.ue_pr.data.data.n'), () => 5) as typeof doc
    expect(JSON.parse(out2.parameters[1]!.value).data.data.n).toBe(5)
    expect(doc.parameters[1]!.value).toContain('"n":1') // the original is not changed
  })
  it('refuses malformed paths and super-linear regexes with the place', () => {
    expect(() => parsePath('a.b')).toThrow(/does not start with \$/)
    expect(() => parsePath('$.a[x]')).toThrow(/at 3 of path/)
    expect(() => parsePath('$.a[?(@.n=~(a)\\1)]')).toThrow(/filter's regex at 11/)
  })
  it('says where a path leads nowhere', () => {
    expect(() => update(doc, parsePath('$.nope.x'), () => 1)).toThrow(/path \$\.nope\.x leads nowhere/)
  })
})

describe('conditions', () => {
  const row = svRow({ e: 'ue', ue_px: b64(JSON.parse(ue('iglu:com.acme/e/jsonschema/1-0-0', { n: 1 }))) }).data
  const cond = (path: string, value: unknown) => {
    const c = config({ [SV]: [{ name: 'f', conditions: [{ op: 'Test', path, value }], steps: [] }] })
    return holds(c.keys[0]!.flows[0]!.conditions[0]!, row)
  }
  it('value: equal JSON', () => {
    expect(cond('$.payload.raw.userId', { value: 'u-1' })).toBe(true)
    expect(cond('$.payload.raw.userId', { value: 'u-2' })).toBe(false)
    expect(cond('$.processor', { value: { artifact: 'snowplow-enrich-kinesis', version: '3.7.0' } })).toBe(true)
  })
  it('regex: found in the compact JSON text, base64 fields decoded', () => {
    expect(cond('$.payload.raw.parameters.ue_px.data.schema', { regex: 'com\\.acme/e' })).toBe(true)
    expect(cond('$.payload.raw.parameters.ue_px.data.data', { regex: '"n":1' })).toBe(true)
    expect(cond('$.failure.messages.[0].schemaKey', { regex: '^iglu:com.other' })).toBe(false)
  })
  it('size: eq, gt, lt on strings and lists', () => {
    expect(cond('$.processor.artifact', { size: { eq: 23 } })).toBe(true)
    expect(cond('$.processor.artifact', { size: { gt: 3 } })).toBe(true)
    expect(cond('$.processor.artifact', { size: { lt: 3 } })).toBe(false)
    expect(cond('$.payload.raw.parameters', { size: { eq: 2 } })).toBe(true)
  })
  it('a missing path does not hold', () => {
    expect(cond('$.payload.raw.nothing', { regex: '.*' })).toBe(false)
  })
})

describe('steps', () => {
  const p = { raw: { refererUri: 'http://a/', parameters: [{ name: 'aid', value: 'shop' }, { name: 'ue_pr', value: ue('iglu:0/v/jsonschema/1-0-0', { formId: '4MAxyz', n: 1, ok: true, list: ['a', 'b'] }) }] } }
  const step = (s: Record<string, unknown>, version = '4-0-0') => config({ [SV]: [{ name: 'f', conditions: [], steps: [s] }] }, version).keys[0]!.flows[0]!.steps[0]!
  const uePr = (out: unknown) => JSON.parse(((out as typeof p).raw.parameters[1]!.value)).data
  it('Replace a value, and by regex with $1', () => {
    expect(uePr(applyRecoveryStep(p, step({ op: 'Replace', path: '$.raw.parameters.ue_pr.data.schema', value: 'iglu:com.acme/v/jsonschema/1-0-0' }))).schema).toBe('iglu:com.acme/v/jsonschema/1-0-0')
    expect(uePr(applyRecoveryStep(p, step({ op: 'Replace', path: '$.raw.parameters.[?(@.name=~ue_pr)].value.data.data.formId', match: '4MA(\\w+)', value: 'form-$1' }))).data.formId).toBe('form-xyz')
    // on an object: the regex runs on its compact JSON, which must stay an object
    const added = applyRecoveryStep(p, step({ op: 'Replace', path: '$.raw.parameters.ue_pr.data.data', match: '^(.*)}$', value: '$1,"event":"open"}' }))
    expect(uePr(added).data.event).toBe('open')
    expect(() => applyRecoveryStep(p, step({ op: 'Replace', path: '$.raw.parameters.ue_pr.data.data', match: '^(.*)}$', value: '$1' }))).toThrow(/not JSON/)
    // a number is replaced by a number only
    expect(() => applyRecoveryStep(p, step({ op: 'Replace', path: '$.raw.parameters.ue_pr.data.data.n', value: 'x' }))).toThrow(/cannot replace the number/)
  })
  it('Remove empties what it finds (or the part its regex matches)', () => {
    const out = applyRecoveryStep(p, step({ op: 'Remove', path: '$.raw.parameters.aid' })) as typeof p
    expect(out.raw.parameters[0]).toEqual({ name: 'aid', value: '' })
    const part = applyRecoveryStep(p, step({ op: 'Remove', path: '$.raw.refererUri', match: '/$' })) as typeof p
    expect(part.raw.refererUri).toBe('http://a')
  })
  it('Cast between String, Numeric, Boolean and Array', () => {
    expect(castValue(0, 'Numeric', 'Boolean')).toBe(false)
    expect(castValue(3, 'Numeric', 'Boolean')).toBe(true)
    expect(castValue(true, 'Boolean', 'Numeric')).toBe(1)
    expect(castValue('12.5', 'String', 'Numeric')).toBe(12.5)
    expect(castValue(7, 'Numeric', 'String')).toBe('7')
    expect(castValue('a', 'String', 'Array')).toEqual(['a'])
    expect(() => castValue('x', 'String', 'Numeric')).toThrow(/cannot cast "?x"? from String to Numeric/)
    expect(uePr(applyRecoveryStep(p, step({ op: 'Cast', path: '$.raw.parameters.ue_pr.data.data.ok', from: 'Boolean', to: 'Numeric' }))).data.ok).toBe(1)
  })
  it('Add (4-1-0 only): joins with what is there, or adds the key or parameter', () => {
    expect(uePr(applyRecoveryStep(p, step({ op: 'Add', path: '$.raw.parameters.ue_pr.data.data.list', value: ['c'] }, '4-1-0'))).data.list).toEqual(['a', 'b', 'c'])
    expect(uePr(applyRecoveryStep(p, step({ op: 'Add', path: '$.raw.parameters.ue_pr.data.data.extra', value: 'x' }, '4-1-0'))).data.extra).toBe('x')
    const withParam = applyRecoveryStep(p, step({ op: 'Add', path: '$.raw.parameters.tna', value: 'ns' }, '4-1-0')) as typeof p
    expect(withParam.raw.parameters.at(-1)).toEqual({ name: 'tna', value: 'ns' })
    const c = parseEventRecoveryConfig({ schema: 'iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0', data: { [SV]: [{ name: 'f', conditions: [], steps: [{ op: 'Add', path: '$.a', value: 1 }] }] } })
    expect(c.ok ? [] : c.errors).toEqual([expect.stringMatching(/steps\/0: Add needs the recoveries schema 4-1-0/)])
  })
})

describe('configurations', () => {
  it('accepts 2-0-0 to 4-1-0 and refuses other documents with the place', () => {
    for (const v of ['2-0-0', '2-0-1', '3-0-0', '4-0-0', '4-1-0']) expect(() => config({ [SV]: [] }, v)).not.toThrow()
    const bad = parseEventRecoveryConfig({ schema: 'iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0', data: { [SV]: [{ name: 'f', conditions: [{ op: 'Test', path: '$.a', value: { regex: '(a)\\1' } }], steps: [] }] } })
    expect(bad.ok ? [] : bad.errors).toEqual([expect.stringMatching(/^\/data\/iglu:com.snowplowanalytics.snowplow.badrows~1schema_violations~1jsonschema~12-0-0\/0\/conditions\/0\/value\/regex: /)])
    const v5 = parseEventRecoveryConfig({ schema: 'iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/5-0-0', data: {} })
    expect(v5.ok).toBe(false)
  })
  it('matches schema keys with * version parts', () => {
    const c = config({ 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-*-*': [{ name: 'a', conditions: [], steps: [] }], 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/1-0-0': [{ name: 'b', conditions: [], steps: [] }] })
    const r = recoverRow(svRow({ e: 'pv' }), c)
    expect(r.ok && r.flows).toEqual(['a'])
  })
  it('Floe steps documents still parse through the same entry', () => {
    const r = parseRecoveryDocument({ schema: 'iglu:io.floe/recovery_steps/jsonschema/1-0-0', data: undefined })
    expect(r.ok).toBe(false)
    expect(r.ok ? '' : r.errors.join()).not.toMatch(/recoveries/)
  })
})

describe('recovering rows', () => {
  it('applies the steps of every matching flow, in order; flows whose conditions fail are skipped', () => {
    const c = config({
      [SV]: [
        { name: 'one', conditions: [], steps: [{ op: 'Replace', path: '$.raw.parameters.aid', value: 'a1' }] },
        { name: 'never', conditions: [{ op: 'Test', path: '$.payload.raw.userId', value: { value: 'nobody' } }], steps: [{ op: 'Replace', path: '$.raw.parameters.aid', value: 'zz' }] },
        { name: 'two', conditions: [{ op: 'Test', path: '$.payload.raw.userId', value: { value: 'u-1' } }], steps: [{ op: 'Replace', path: '$.raw.parameters.aid', match: '^(a1)$', value: '$1-b2' }] },
      ],
    })
    const r = recoverRow(svRow({ e: 'pv', aid: 'x' }), c)
    expect(r.ok && r.flows).toEqual(['one', 'two'])
    expect(paramOf(r, 'aid')).toBe('a1-b2')
  })
  it('a row no flow matches fails with FailedToMatchConfiguration', () => {
    const c = config({ [SV]: [{ name: 'f', conditions: [{ op: 'Test', path: '$.payload.raw.userId', value: { value: 'other' } }], steps: [] }] })
    const r = recoverRow(svRow({ e: 'pv' }), c)
    expect(r.ok ? '' : r.error).toMatch(/^FailedToMatchConfiguration/)
    const other = recoverRow({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-0', data: { payload: {} } }, c)
    expect(other.ok ? '' : other.error).toMatch(/^FailedToMatchConfiguration/)
  })
  it('a failing step names the flow and step; the recovery_error row keeps the original', () => {
    const c = config({ [SV]: [{ name: 'fix', conditions: [], steps: [{ op: 'Replace', path: '$.raw.parameters.nope', value: 'x' }] }] })
    const out = recoverLine(JSON.stringify(svRow({ e: 'pv' })), c, 'r1', 0)
    expect(out.ok).toBe(false)
    const bad = JSON.parse(out.ok ? '{}' : out.badRow)
    expect(bad.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1')
    expect(bad.data.failure).toEqual({ error: 'flow fix, step 0 (Replace $.raw.parameters.nope): path $.raw.parameters.nope leads nowhere', configName: 'fix' })
    expect(bad.data.payload.schema).toBe(SV)
  })
  it('the rows not recovered validate: Snowplow\'s recovery_error with the row, Floe\'s with a line that is no known bad row', () => {
    const c = config({ [SV]: [] })
    const snowplow = compileSelfDescribing(readSchema('iglu-central/schemas/com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1'))
    const floe = compileSelfDescribing(readSchema('io.floe/recovery_error/jsonschema/1-0-0'))
    for (const [line, schema, validate] of [[JSON.stringify(svRow({ e: 'pv' })), 'iglu:com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1', snowplow], ['not json', 'iglu:io.floe/recovery_error/jsonschema/1-0-0', floe]] as const) {
      const out = recoverLine(line, c, 'r1', 0)
      const row = JSON.parse(out.ok ? '{}' : out.badRow)
      expect(row.schema).toBe(schema)
      expect(validate(row.data), JSON.stringify(validate.errors)).toBe(true)
    }
  })
  it('recovery_error rows are unwrapped and recovered again', () => {
    const c = config({ [SV]: [{ name: 'f', conditions: [], steps: [{ op: 'Replace', path: '$.raw.parameters.aid', value: 'fixed' }] }] })
    const inner = svRow({ e: 'pv', aid: 'x' })
    const wrapped = { schema: 'iglu:com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1', data: { processor: { artifact: 'a', version: '1' }, failure: { error: 'e' }, payload: inner } }
    const twice = { ...wrapped, data: { ...wrapped.data, payload: JSON.stringify(wrapped) } }
    for (const row of [wrapped, twice]) {
      const r = recoverRow(row, c)
      expect(paramOf(r, 'aid')).toBe('fixed')
    }
  })
  it('size_violation rows cannot be recovered', () => {
    const c = config({ 'iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/*-*-*': [{ name: 'f', conditions: [], steps: [] }] })
    const r = recoverRow({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0', data: { payload: { event: 'abc' } } }, c)
    expect(r.ok ? '' : r.error).toMatch(/^size_violation bad rows cannot be recovered/)
  })
  it('raw events are replayed as a GET of their path, with the enriched event id as eid when they had none', () => {
    const c = config({ [SV]: [{ name: 'f', conditions: [], steps: [] }] })
    const row = svRow({ e: 'pv' })
    ;(row.data.payload.enriched as Record<string, unknown>).event_id = '2dfeb9b7-5a87-4214-8a97-a8b23176856b'
    const out = recoverLine(JSON.stringify(row), c, 'r1', 0)
    const d = decodeCollectorPayload(out.ok ? out.payload : new Uint8Array())
    expect(d.ok && [d.payload.path, d.payload.querystring, d.payload.body]).toEqual(['/com.snowplowanalytics.snowplow/tp2', 'e=pv&eid=2dfeb9b7-5a87-4214-8a97-a8b23176856b', undefined])
  })
  it('adapter failures: steps on the collector payload, replayed as a payload of the same path', () => {
    const row = { schema: 'iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-0', data: { payload: { vendor: 'com.snowplowanalytics.iglu', version: 'v1', querystring: [{ name: 'schema', value: 'iglu' }, { name: 'e', value: 'pv' }], timestamp: '2024-01-01T00:00:00Z', headers: [] } } }
    const c = config({ 'iglu:com.snowplowanalytics.snowplow.badrows/adapter_failures/jsonschema/1-0-*': [{ name: 'f', conditions: [{ op: 'Test', path: '$.payload.querystring.[?(@.name=~schema)].value', value: { value: 'iglu' } }], steps: [{ op: 'Replace', path: '$.querystring.[?(@.name=~schema)].value', value: 'iglu:com.acme/a/jsonschema/1-0-0' }] }] })
    const out = recoverLine(JSON.stringify(row), c, 'r1', 0)
    const d = decodeCollectorPayload(out.ok ? out.payload : new Uint8Array())
    const cp = d.ok ? d.payload : undefined
    expect(cp?.path).toBe('/com.snowplowanalytics.iglu/v1')
    expect(cp?.querystring).toBe('schema=iglu%3Acom.acme%2Fa%2Fjsonschema%2F1-0-0&e=pv')
  })
  it('collector_payload_format_violation: the kept record, decoded from base64 (twice when it was base64 text)', () => {
    const bytes = Buffer.from([0x0b, 0x00, 0x64, 1, 2, 3])
    expect(Buffer.from(thriftBytes(bytes.toString('base64')))).toEqual(bytes)
    expect(Buffer.from(thriftBytes(Buffer.from(bytes.toString('base64')).toString('base64')))).toEqual(bytes)
  })
})

describe('the API body', () => {
  const cfg = { schema: 'iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0', data: { [SV]: [{ name: 'f', conditions: [], steps: [] }] } }
  it('takes config, and a recoveries document as steps too', () => {
    for (const body of [{ config: cfg, dryRun: true }, { steps: cfg, dryRun: true }]) {
      const r = parseRecoverRequest(body)
      expect(r.ok && r.value.steps.eventRecovery?.keys.length).toBe(1)
      expect(r.ok && r.value.stepsDocument).toEqual(cfg)
    }
  })
  it('refuses both, a Floe steps document as config, and an unusable configuration with the place', () => {
    expect(parseRecoverRequest({ config: cfg, steps: cfg })).toMatchObject({ ok: false, message: expect.stringMatching(/not both/) })
    expect(parseRecoverRequest({ config: { schema: 'iglu:io.floe/recovery_steps/jsonschema/1-0-0', data: {} } })).toMatchObject({ ok: false, message: expect.stringMatching(/config must be a snowplow-event-recovery configuration/) })
    const broken = { ...cfg, data: { [SV]: [{ name: 'f', conditions: [], steps: [{ op: 'Replace', path: 'raw', value: 1 }] }] } }
    expect(parseRecoverRequest({ config: broken })).toMatchObject({ ok: false, message: 'the snowplow-event-recovery configuration is not usable', errors: [expect.stringMatching(/\/0\/steps\/0\/path: path 'raw' does not start with \$/)] })
  })
  it('a queued share carries the configuration to the recovery worker', () => {
    const m = parseShareMessage(JSON.stringify({ runId: 'r', share: 0, selection: {}, source: 'search', steps: cfg }))
    expect(m.steps.eventRecovery?.keys.length).toBe(1)
  })
})
