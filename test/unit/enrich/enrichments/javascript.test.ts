/**
 * The JavaScript enrichment: Snowplow's event API and result rules (enrich's
 * JavascriptScriptEnrichmentSpec cases), and the isolation — scripts that try
 * to reach the host, loop forever, recurse or allocate without bound are
 * contained and reported, and the next event runs normally.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { projectRoot } from '../../../../lib/local/handlers'
import { parseIgluUri } from '../../../../lib/core/iglu/keys'
import { EnrichedEvent } from '../../../../lib/core/enrich/event'
import { createJavascriptEnrichment, readOutput, SCRIPT_LIMITS, type ScriptLimits } from '../../../../lib/core/enrich/enrichments/javascript'
import { ORDER } from '../../../../lib/core/enrich/enrichments/module'
import type { Enrichment, StepInput, StepResult } from '../../../../lib/core/enrich/steps'
import { badRows, batch, columns, configuredEnricher, derivedOf, enrichmentConfig, goodColumns, only, tp2 } from '../helpers'

const SCHEMA = 'iglu:com.snowplowanalytics.snowplow/javascript_script_config/jsonschema/1-0-1'
const b64 = (s: string) => Buffer.from(s).toString('base64')
const config = (script: string, params?: object, source = 'scripts/test.json') => ({
  source,
  schema: (parseIgluUri(SCHEMA) as { ok: true; value: any }).value,
  data: {},
  parameters: { script: b64(script), ...(params ? { config: params } : {}) },
})
const LIMITS: ScriptLimits = { ...SCRIPT_LIMITS, timeMs: 50 }
const build = (script: string, params?: object, limits = LIMITS) => createJavascriptEnrichment(config(script, params), false, limits)

function event(appId = 'my super app'): EnrichedEvent {
  const ev = new EnrichedEvent()
  ev.set('platform', 'srv')
  ev.set('app_id', appId)
  return ev
}
const input = (headers: string[] = []): StepInput => ({ raw: { payload: { headers } } as any, pageQuery: null })
const run = async (e: Enrichment, ev = event(), headers: string[] = []): Promise<StepResult> => e.run(ev, input(headers))
const errorOf = (r: StepResult): string => {
  expect(r.failures).toHaveLength(1)
  const f = r.failures![0]!
  expect(f.enrichment).toEqual({ schemaKey: SCHEMA, identifier: 'Javascript enrichment' })
  return (f.message as { error: string }).error
}

describe('JavaScript enrichment: Snowplow semantics', () => {
  it('returns the contexts the script builds from the event', async () => {
    const e = await build(`function process(event) {
      return [{ schema: "iglu:com.acme/foo/jsonschema/1-0-0", data: { appId: event.getApp_id() } },
              { schema: "iglu:com.acme/bar/jsonschema/1-0-0", data: { hello: "world" } }]
    }`)
    expect(e.order).toBe(ORDER.javascript)
    expect(await run(e, event('greatApp'))).toEqual({
      contexts: [
        { schema: 'iglu:com.acme/foo/jsonschema/1-0-0', data: '{"appId":"greatApp"}' },
        { schema: 'iglu:com.acme/bar/jsonschema/1-0-0', data: '{"hello":"world"}' },
      ],
    })
  })

  it('lets the script set fields, with or without a return, and with the configured params', async () => {
    const ev = event()
    await run(await build(`function process(event, params) { event.setApp_id(params.nested.foo); event.setTxn_id(42); event.setTr_total(12.5); event.setBr_features_pdf(true); event.setDvce_created_tstamp("2025-04-30 10:00:00.1") }`, { nested: { foo: 'newId' } }), ev)
    expect([ev.get('app_id'), ev.get('txn_id'), ev.get('tr_total'), ev.get('br_features_pdf'), ev.get('dvce_created_tstamp')]).toEqual(['newId', 42, '12.5', 1, '2025-04-30 10:00:00.100'])
    expect(await run(await build('function process(event) { var a = 42 }'))).toEqual({})
    expect(await run(await build('function process(event) { return null }'))).toEqual({})
    expect(await run(await build('function process(event) { return [] }'))).toEqual({})
  })

  it('reads a field again after setting it, and by a computed name', async () => {
    const e = await build(`function process(event) {
      var before = event.getUser_id(); event.setUser_id("  x\\ty "); var after = event.getUser_id();
      return [{ schema: "iglu:com.acme/foo/jsonschema/1-0-0", data: { before: before, after: after, dynamic: event["get" + "Platform"](), path: event.getPage_urlpath() } }]
    }`)
    const ev = event()
    ev.set('user_id', 'u1')
    expect(JSON.parse((await run(e, ev)).contexts![0]!.data)).toEqual({ before: 'u1', after: '  x    y ', dynamic: 'srv', path: null })
  })

  it('gives numbers for numeric fields and null for unset ones, and cleans text as the tracker\'s would be', async () => {
    const ev = event()
    ev.set('domain_sessionidx', 3)
    ev.set('tr_total', '10.25')
    const e = await build(`function process(event) {
      event.setUser_id("a\\tb\\nc");
      return [{ schema: "iglu:com.acme/foo/jsonschema/1-0-0", data: { idx: event.getDomain_sessionidx(), total: event.getTr_total(), city: event.getGeo_city() } }]
    }`)
    expect((await run(e, ev)).contexts![0]!.data).toBe('{"idx":3,"total":10.25,"city":null}')
    expect(ev.get('user_id')).toBe('a    bc')
  })

  it('fails naming the setter when a value does not fit the field', async () => {
    const msg = errorOf(await run(await build('function process(event) {\n  event.setTxn_id("forty-two")\n}')))
    expect(msg).toMatch(/^Error during execution of JavaScript function: \[TypeError: setTxn_id: expected a 32-bit integer, got "forty-two" in scripts\/test\.json at line number 2 at column number \d+\]$/)
    expect(errorOf(await run(await build('function process(event) { event.setCollector_tstamp("yesterday") }')))).toContain('setCollector_tstamp: expected a timestamp')
  })

  it('reads and replaces contexts and the unstructured event as JSON text', async () => {
    const ev = event()
    ev.contexts = [{ schema: 'iglu:com.snowplowanalytics.snowplow/client_session/jsonschema/1-0-1', data: '{"userId":"u1"}' }]
    ev.unstruct = { schema: 'iglu:com.acme/thing/jsonschema/1-0-0', data: '{"a":1}' }
    ev.derived = [{ schema: 'iglu:com.acme/earlier/jsonschema/1-0-0', data: '{}' }]
    const e = await build(`function process(event) {
      const co = JSON.parse(event.getContexts()); co.data[0].data.userId = "u2"; event.setContexts(JSON.stringify(co));
      const ue = JSON.parse(event.getUnstruct_event()); ue.data.schema = "iglu:com.acme/other/jsonschema/1-0-0"; event.setUnstruct_event(JSON.stringify(ue));
      return [{ schema: "iglu:com.acme/seen/jsonschema/1-0-0", data: { derived: JSON.parse(event.getDerived_contexts()).data.length } }]
    }`)
    expect(await run(e, ev)).toEqual({ contexts: [{ schema: 'iglu:com.acme/seen/jsonschema/1-0-0', data: '{"derived":1}' }] })
    expect(ev.contexts).toEqual([{ schema: 'iglu:com.snowplowanalytics.snowplow/client_session/jsonschema/1-0-1', data: '{"userId":"u2"}' }])
    expect(ev.unstruct).toEqual({ schema: 'iglu:com.acme/other/jsonschema/1-0-0', data: '{"a":1}' })
    expect(errorOf(await run(await build('function process(event) { event.setUnstruct_event(JSON.stringify({foo: "bar"})); return [] }')))).toContain('invalid unstruct_event json')
    expect(errorOf(await run(await build('function process(event) { event.setContexts(JSON.stringify({foo: "bar"})); return [] }')))).toContain('invalid contexts json')
  })

  it('drops the event on drop(), and erases earlier derived contexts on eraseDerived_contexts()', async () => {
    expect(await run(await build('function process(event) { event.drop() }'))).toEqual({ drop: true })
    expect(await run(await build('function process(event) { try { event.drop() } catch (e) {} return [] }'))).toEqual({ drop: true })
    const ev = event()
    ev.derived = [{ schema: 'iglu:com.acme/earlier/jsonschema/1-0-0', data: '{}' }]
    expect(await run(await build('function process(event) { event.eraseDerived_contexts() }'), ev)).toEqual({})
    expect(ev.derived).toEqual([])
  })

  it('passes the request headers as the third argument', async () => {
    const ev = event()
    const e = await build(`function process(event, params, headers) {
      for (const h of headers) { const jwt = h.match(/X-JWT:(.+)/i); if (jwt) event.setApp_id(jwt[1].trim()) }
    }`)
    await run(e, ev, ['Host: x', 'x-jwt: newId'])
    expect(ev.get('app_id')).toBe('newId')
  })

  it('reports a throwing script, a non-array result and non-self-describing contexts in Snowplow\'s words, naming the script', async () => {
    expect(errorOf(await run(await build('function process(event) {\n  throw "Error"\n}')))).toBe('Error during execution of JavaScript function: [Error in scripts/test.json]')
    expect(errorOf(await run(await build('function process(event) {\n  null.x\n}')))).toMatch(/^Error during execution of JavaScript function: \[TypeError: .* in scripts\/test\.json at line number 2/)
    expect(errorOf(await run(await build('function process(event) { return { foo: "bar" } }')))).toBe('Output of JavaScript function [{"foo":"bar"}] could be parsed as JSON but is not read as an array (scripts/test.json)')
    expect(errorOf(await run(await build('function process(event) { return [ { foo: "bar" } ] }')))).toBe(
      'Resulting contexts are not self-desribing. Error(s): [error code:[INVALID_DATA_PAYLOAD],json:[{"foo":"bar"}]] (scripts/test.json)',
    )
    expect(errorOf(await run(await build('function process(event) { return [ { schema: "nope", data: {} } ] }')))).toMatch(/not self-desribing.*json:\[\{"schema":"nope","data":\{\}\}\]/)
    expect(errorOf(await run(await build('function process(event) { return function () {} }')))).toMatch(/^Could not parse output JSON of Javascript function/)
  })

  it('refuses at start a script that does not compile, defines no process or is empty', async () => {
    await expect(build('function process(event) { return [')).rejects.toThrow(/^Error compiling JavaScript function: \[SyntaxError: .* in scripts\/test\.json at line number 1/)
    await expect(build('var x = 1')).rejects.toThrow('the script does not define a function process(event, params)')
    await expect(createJavascriptEnrichment({ ...config(''), parameters: { script: '' } }, false)).rejects.toThrow(/parameters\.script is empty/)
    await expect(build('while (true) {}\nfunction process() {}')).rejects.toThrow(/ran longer than its limit of 50 ms/)
    await expect(build('Object.defineProperty(globalThis, "process", { get: function () { for (;;) {} } })')).rejects.toThrow(/ran longer than its limit of 50 ms/)
  })

  it('with exitOnJsCompileError false, fails every event with the compile error instead of stopping', async () => {
    const e = await createJavascriptEnrichment(config('function process(event) { return ['), false, LIMITS, false)
    expect(errorOf(await run(e))).toMatch(/^Error compiling JavaScript function: \[SyntaxError: .* in scripts\/test\.json at line number 1.*\] \(scripts\/test\.json\)$/)
  })

  it('reads URL-safe base64 and keeps params read-only', async () => {
    const script = 'function process(event, params) { params.n = 2; return [{ schema: "iglu:com.acme/p/jsonschema/1-0-0", data: { n: params.n, ok: "??>>" } }] }'
    const urlSafe = Buffer.from(script).toString('base64url')
    const e = await createJavascriptEnrichment({ ...config(''), parameters: { script: urlSafe, config: { n: 1 } } }, false, LIMITS)
    expect((await run(e)).contexts![0]!.data).toBe('{"n":1,"ok":"??>>"}')
  })
})

describe('JavaScript enrichment: isolation', () => {
  const probe = async (expr: string) => {
    const e = await build(`function process(event) { return [{ schema: "iglu:com.acme/probe/jsonschema/1-0-0", data: { v: (function () { try { return ${expr} } catch (e) { return "threw " + e.name } })() } }] }`)
    return JSON.parse((await run(e)).contexts![0]!.data).v
  }

  it('offers no host: require, process, modules, timers, fetch and Node globals are absent', async () => {
    expect(await probe('typeof require')).toBe('undefined')
    expect(await probe('typeof module + typeof exports + typeof Buffer + typeof fetch + typeof setTimeout + typeof setInterval + typeof queueMicrotask')).toBe('undefined'.repeat(7))
    expect(await probe('typeof globalThis.process')).toBe('function') // the script's own process function, nothing else
    expect(await probe('typeof globalThis.__floe_host + typeof host + typeof get + typeof set')).toBe('undefined'.repeat(4))
    expect(await probe('Object.getOwnPropertyNames(globalThis).filter(function (k) { return /^(require|module|os|std|console|fs|Deno|Bun|WebAssembly)$/.test(k) }).length')).toBe(0)
    expect(await probe('(function () { return this })() === undefined ? "strict" : typeof (function () { return this })().require')).toBe('undefined')
    expect(await probe('Function("return this")().process === globalThis.process')).toBe(true)
    expect(await probe('typeof (0, eval)("typeof require")')).toBe('string')
    expect(await probe('(0, eval)("typeof require")')).toBe('undefined')
    await expect(build('function process() { return import.meta }')).rejects.toThrow(/import\.meta only valid in module code/)
  })

  it('cannot load modules or reach the event API\'s host functions', async () => {
    expect(await probe('import("fs")')).toEqual({})
    const e = await build('function process(event) { var g = Object.getPrototypeOf(event).getApp_id; return [{ schema: "iglu:com.acme/probe/jsonschema/1-0-0", data: { src: String(g), proto: Object.isFrozen(Object.getPrototypeOf(event)) } }] }')
    const d = JSON.parse((await run(e)).contexts![0]!.data)
    expect(d.proto).toBe(true)
    expect(d.src).not.toContain('native code] get')
  })

  it('stops an endless loop at the time limit, reports it, and runs the next event', async () => {
    const e = await build('var n = 0\nfunction process(event) { n++; if (event.getApp_id() === "loop") while (true) {} return [{ schema: "iglu:com.acme/n/jsonschema/1-0-0", data: { n: n } }] }')
    const t = performance.now()
    const msg = errorOf(await run(e, event('loop')))
    expect(performance.now() - t).toBeLessThan(1000)
    expect(msg).toBe('Error during execution of JavaScript function: [InternalError: interrupted: the script ran longer than its limit of 50 ms per event in scripts/test.json]')
    // started afresh: its global state is new
    expect((await run(e)).contexts![0]!.data).toBe('{"n":1}')
  })

  it('stops catastrophic regular expressions at the time limit', async () => {
    const msg = errorOf(await run(await build('function process(event) { /(a+)+$/.test("a".repeat(40) + "b") }')))
    expect(msg).toMatch(/interrupted/)
  })

  it('contains huge allocations within the memory limit', async () => {
    const next = 'if (event.getApp_id() === "next") return [];'
    for (const code of ['"x".repeat(2 ** 29)', 'new ArrayBuffer(2 ** 30)', 'var s = "x"; for (;;) s += s', 'globalThis.kept = []; for (;;) kept.push({ n: kept.length })']) {
      const e = await build(`function process(event) { ${next} ${code}; return [] }`)
      const t = performance.now()
      expect(errorOf(await run(e))).toMatch(/out of memory \(the script's memory limit is 32 MB\)|interrupted|string too long/)
      expect(performance.now() - t).toBeLessThan(2000)
      expect(await run(e, event('next'))).toEqual({})
    }
  })

  it('contains runaway recursion and deeply nested values', async () => {
    for (const code of ['function f() { return f() + 1 } f()', 'var o = {}, c = o; for (var i = 0; i < 1e5; i++) { c.a = {}; c = c.a } return [{ schema: "iglu:com.acme/deep/jsonschema/1-0-0", data: o }]', '(0, eval)("(".repeat(20000) + "1" + ")".repeat(20000))']) {
      const e = await build(`function process(event) { ${code} }`)
      const r = await run(e)
      expect(errorOf(r)).toMatch(/^(Error during execution of JavaScript function|Could not parse output JSON)/)
      // the next event runs
      const ok = await build('function process(event) { return [] }')
      expect(await run(ok)).toEqual({})
      expect(await run(e, event())).toHaveProperty('failures')
    }
  })

  it('keeps scripts apart: one script\'s globals are not another\'s', async () => {
    const a = await build('globalThis.shared = 1; function process(event) { return [] }')
    const b = await build('function process(event) { return [{ schema: "iglu:com.acme/s/jsonschema/1-0-0", data: { t: typeof shared } }] }')
    await run(a)
    expect((await run(b)).contexts![0]!.data).toBe('{"t":"undefined"}')
  })
})

describe('readOutput', () => {
  it('is null-safe and checks depth', () => {
    expect(readOutput(null)).toEqual({ ok: true, contexts: [] })
    expect(readOutput('[' + '['.repeat(60) + ']'.repeat(60) + ']')).toMatchObject({ ok: false, error: expect.stringMatching(/^Could not parse output JSON of Javascript function\. Error: \[invalid json: maximum allowed JSON depth exceeded\]/) })
  })
})

describe('JavaScript enrichment through the enricher', () => {
  const js = (script: string, source?: string) => enrichmentConfig('com.snowplowanalytics.snowplow', 'javascript_script_config', '1-0-1', { script: b64(script), config: { tag: 'from-config' } }, source ? { source } : {})

  it('runs the configured scripts in order; their contexts are validated like every derived context', async () => {
    const e = await configuredEnricher([
      js('function process(event, params) { event.setApp_id(params.tag); return [{ schema: "iglu:com.snowplowanalytics.snowplow/client_session/jsonschema/1-0-1", data: { userId: "42c8a55b-c0c2-4749-b9ac-09bb0d17d001", sessionId: "42c8a55b-c0c2-4749-b9ac-09bb0d17d000", sessionIndex: 1, previousSessionId: null, storageMechanism: "COOKIE_1" } }] }'),
      js('function process(event) { event.setUser_id(event.getApp_id() + "-2") }'),
    ])
    const c = goodColumns(await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&aid=original'), batch()))
    expect(c.app_id).toBe('from-config')
    expect(c.user_id).toBe('from-config-2')
    expect(derivedOf(c).map((d) => d.schema)).toEqual(['iglu:com.snowplowanalytics.snowplow/client_session/jsonschema/1-0-1'])
  })

  it('turns a script failure into a failed event and an enrichment_failures bad row; an invalid context into a schema violation; drop() into nothing', async () => {
    const e = await configuredEnricher([js('function process(event) { if (event.getApp_id() === "boom") throw new Error("no"); if (event.getApp_id() === "drop") event.drop(); if (event.getApp_id() === "invalid") return [{ schema: "iglu:com.snowplowanalytics.snowplow/client_session/jsonschema/1-0-1", data: { userId: 1 } }] }')])
    const failed = await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&aid=boom'), batch())
    expect(only(failed, 'good')).toHaveLength(0)
    const [row] = badRows(failed)
    expect(row.schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/enrichment_failures/jsonschema/2-0-1')
    expect(row.data.failure.messages[0]).toMatchObject({
      enrichment: { schemaKey: SCHEMA, identifier: 'Javascript enrichment' },
      message: { error: 'Error during execution of JavaScript function: [Error: no in config-0.json at line number 1 at column number 76]' },
    })
    const incomplete = columns((only(failed, 'incomplete')[0] as { tsv: string }).tsv)
    expect(derivedOf(incomplete)[0]!.data.failureType).toBe('EnrichmentError: Javascript enrichment')
    const invalid = await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&aid=invalid'), batch())
    expect(badRows(invalid)[0].schema).toBe('iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/2-0-1')
    const dropped = await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&aid=drop'), batch())
    expect(dropped.outputs).toEqual([])
    expect(dropped.dropped).toBe(1)
  })

  it('runs the example of the repository\'s enrichments/ directory', async () => {
    const doc = JSON.parse(readFileSync(join(projectRoot, 'enrichments', 'javascript_script_config.json'), 'utf8'))
    doc.data.enabled = true
    const e = await configuredEnricher([doc])
    expect(derivedOf(goodColumns(await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&aid=my-web-app'), batch())))).toEqual([{ schema: 'iglu:com.snowplowanalytics.iglu/anything-a/jsonschema/1-0-0', data: { team: 'web' } }])
    expect(goodColumns(await e.enrichRecord(tp2('e=pv&p=web&tv=js-3&aid=other'), batch())).derived_contexts).toBe('')
  })
})
