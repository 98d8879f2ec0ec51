/**
 * `javascript_script_config`: a user script's `process(event, params, headers)`
 * run on every event, in Snowplow's execution order (one step per
 * configuration file, in the order the files are given).
 *
 * The script runs in QuickJS compiled to WebAssembly (quickjs-emscripten),
 * one WebAssembly instance per script: it sees the standard JavaScript
 * built-ins and the event API, and nothing of the host — no `require`,
 * `process`, modules, filesystem, network or timers. Each event's run is
 * bounded in time (`SCRIPT_LIMITS.timeMs`, checked by QuickJS's interrupt
 * handler), memory and stack depth; a script that exceeds a limit, throws, or
 * returns something other than null or an array of self-describing JSON is an
 * enrichment failure for that event naming the script's file. After a limit
 * was hit the script is started afresh (its global state is not kept).
 *
 * The event API follows Snowplow's: `getX()`/`setX(v)` for every atomic field
 * (JavaBean names: `getApp_id`, `setBr_features_pdf`, …), `getContexts()` /
 * `setContexts(text)` and `getUnstruct_event()` / `setUnstruct_event(text)`
 * (the wrapper JSON as text), `getDerived_contexts()` (the contexts earlier
 * enrichments derived), `eraseDerived_contexts()` (keep only this script's),
 * and `drop()` (discard the event silently).
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten'
import { toIgluUri } from '../../iglu/keys'
import { decodeSelfDescribingData, isObject } from '../../iglu/selfdesc'
import { base64Text, toDecimal, tsv } from '../convert'
import { contextsText, unstructText, type EnrichedEvent, type Entity } from '../event'
import { F, FIELDS, FIELD_KINDS } from '../fields'
import { parseJson, quote } from '../json'
import type { Enrichment, EnrichmentFailure, StepInput, StepResult } from '../steps'
import { ConfigError, orderOf, type EnrichmentConfig, type EnrichmentModule } from './module'

/** What one script may use per event. */
export interface ScriptLimits {
  /** Longest a script may run on one event, in milliseconds (also for its top-level code at start). */
  readonly timeMs: number
  /** Memory the script's heap may hold, in bytes. */
  readonly memoryBytes: number
  /** The interpreter's stack, in bytes (bounds recursion). */
  readonly stackBytes: number
}

export const SCRIPT_LIMITS: ScriptLimits = { timeMs: 100, memoryBytes: 32 * 1024 * 1024, stackBytes: 128 * 1024 }

/** How the error of a run stopped at its time limit begins. */
export const INTERRUPTED = 'InternalError: interrupted:'

/** Nesting limit of the JSON a script returns or sets. */
const MAX_JSON_DEPTH = 50
const IDENTIFIER = 'Javascript enrichment'
const JSON_FIELDS = new Set<number>([F.contexts, F.unstruct_event, F.derived_contexts])

/** The QuickJS WebAssembly file (listed in the enrich function's `packageFiles`). */
export const QUICKJS_WASM = '@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm'

/** The compiled QuickJS WebAssembly module, shared by every script's instance. */
let wasmModule: Promise<WebAssembly.Module> | undefined

async function newQuickJS(): Promise<QuickJSWASMModule> {
  const { newQuickJSWASMModule, newVariant, RELEASE_SYNC } = await import('quickjs-emscripten')
  wasmModule ??= (async () => {
    const { readFile } = await import('node:fs/promises')
    const { packageFile } = await import('../../package-files')
    const { createRequire } = await import('node:module')
    let file: string
    try {
      // in a Lambda bundle the file is shipped in package-files/
      file = packageFile(QUICKJS_WASM)
    } catch {
      // in node_modules, behind the package's exports
      file = createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm')
    }
    const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }).WebAssembly
    return wasm.compile(await readFile(file))
  })()
  const compiled = await wasmModule
  return newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmModule: compiled }))
}

/** `app_id` → `App_id` (JavaBean property names). */
const beanName = (field: string) => field[0]!.toUpperCase() + field.slice(1)

/**
 * Code run before the script: it takes the host functions off the global
 * object (only the event API reaches them) and returns `start(params)`, which
 * finds the script's `process` and returns the per-event runner.
 */
const PRELUDE = `(function (host, fields, prefetched) {
  'use strict';
  var get = host.get, set = host.set, drop = host.drop, erase = host.erase, headers = host.headers;
  var stringify = JSON.stringify, parse = JSON.parse, freeze = Object.freeze, keys = Object.keys;
  // the values of the columns the script's source names, sent with each event; STALE once set
  var STALE = {}, values = [], slot = [];
  fields.forEach(function (_, i) { slot.push(-1); });
  prefetched.forEach(function (col, k) { slot[col] = k; });
  function Event() {}
  var proto = Event.prototype;
  fields.forEach(function (name, i) {
    var bean = name[0].toUpperCase() + name.slice(1), k = slot[i];
    proto['get' + bean] = k < 0 ? function () { return get(i); } : function () { var v = values[k]; return v === STALE ? get(i) : v; };
    proto['set' + bean] = name === 'derived_contexts' ? function () {} : k < 0 ? function (v) { set(i, v); } : function (v) { values[k] = STALE; set(i, v); };
  });
  proto.drop = function () { drop(); throw new Error('event dropped'); };
  proto.eraseDerived_contexts = function () { erase(); };
  freeze(proto);
  function deepFreeze(v) {
    if (v !== null && typeof v === 'object') { keys(v).forEach(function (k) { deepFreeze(v[k]); }); freeze(v); }
    return v;
  }
  globalThis.print = function () {};
  return function start(paramsJson) {
    var proc = globalThis.process;
    if (typeof proc !== 'function') return 'the script does not define a function process(event, params)';
    var params = deepFreeze(parse(paramsJson));
    var wantsHeaders = proc.length >= 3;
    return function run(pre) {
      values = pre === undefined ? [] : parse(pre);
      var r = proc(new Event(), params, wantsHeaders ? parse(headers()) : undefined);
      if (r === null || r === undefined) return '';
      var s = stringify(r);
      return typeof s === 'string' ? s : 'undefined';
    };
  };
})`

/** Why a run ended without a result. */
type Outcome = { kind: 'ok'; text: string | null } | { kind: 'error'; message: string; reset: boolean }

/** One script in its own QuickJS instance. */
class Sandbox {
  private event: EnrichedEvent | null = null
  private headers: readonly string[] = []
  private dropped = false
  private erased = false
  private deadline = Infinity
  private interrupted = false
  private runFn!: QuickJSHandle

  /** The columns whose getters the script's source names: their values go with each event (one host call each otherwise). */
  private readonly prefetch: number[]

  private constructor(
    private readonly vm: QuickJSContext,
    private readonly rt: QuickJSRuntime,
    private readonly source: string,
    private readonly limits: ScriptLimits,
    script: string,
  ) {
    this.prefetch = namedColumns(script)
  }

  /** A started script, or the reason it cannot start (a compile error, no `process`, a limit hit at top level). */
  static async start(source: string, script: string, paramsJson: string, limits: ScriptLimits): Promise<Sandbox | string> {
    const qjs = await newQuickJS()
    const rt = qjs.newRuntime()
    rt.setMemoryLimit(limits.memoryBytes)
    rt.setMaxStackSize(limits.stackBytes)
    const vm = rt.newContext()
    const s = new Sandbox(vm, rt, source, limits, script)
    rt.setInterruptHandler(() => {
      if (performance.now() <= s.deadline) return false
      s.interrupted = true
      return true
    })
    try {
      return s.init(script, paramsJson)
    } catch (err) {
      return `the script could not be started: ${(err as Error).message}`
    }
  }

  private init(script: string, paramsJson: string): Sandbox | string {
    const vm = this.vm
    const host = vm.newObject()
    const fns: [string, QuickJSHandle][] = [
      ['get', vm.newFunction('get', (i) => this.get(vm.getNumber(i)))],
      ['set', vm.newFunction('set', (i, v) => this.set(vm.getNumber(i), v))],
      ['drop', vm.newFunction('drop', () => { this.dropped = true })],
      ['erase', vm.newFunction('erase', () => { this.erased = true })],
      ['headers', vm.newFunction('headers', () => vm.newString(JSON.stringify(this.headers)))],
    ]
    for (const [k, f] of fns) {
      vm.setProp(host, k, f)
      f.dispose()
    }
    const prelude = this.eval(PRELUDE, 'prelude.js')
    if (prelude.kind === 'error') return prelude.message
    const fieldsHandle = vm.unwrapResult(vm.evalCode(`JSON.parse(${JSON.stringify(JSON.stringify(FIELDS))})`))
    const prefetchHandle = vm.unwrapResult(vm.evalCode(`JSON.parse(${JSON.stringify(JSON.stringify(this.prefetch))})`))
    const setup = vm.callFunction(prelude.handle, vm.undefined, host, fieldsHandle, prefetchHandle)
    prelude.handle.dispose()
    host.dispose()
    fieldsHandle.dispose()
    prefetchHandle.dispose()
    const start = vm.unwrapResult(setup)
    // the script, as a global script named by its file
    this.deadline = performance.now() + this.limits.timeMs
    const compiled = vm.evalCode(script, this.source)
    this.deadline = Infinity
    if (compiled.error) {
      const m = this.describe(compiled.error)
      compiled.error.dispose()
      start.dispose()
      return `Error compiling JavaScript function: [${m}]`
    }
    compiled.value.dispose()
    const p = vm.newString(paramsJson)
    // finding `process` can run the script's code too (a getter): under the same limit
    this.deadline = performance.now() + this.limits.timeMs
    const runner = vm.callFunction(start, vm.undefined, p)
    this.deadline = Infinity
    p.dispose()
    start.dispose()
    if (runner.error) {
      const m = this.describe(runner.error)
      runner.error.dispose()
      return m
    }
    if (vm.typeof(runner.value) === 'string') {
      const m = vm.getString(runner.value)
      runner.value.dispose()
      return m
    }
    this.runFn = runner.value
    return this
  }

  private eval(code: string, file: string): { kind: 'ok'; handle: QuickJSHandle } | { kind: 'error'; message: string } {
    const r = this.vm.evalCode(code, file)
    if (r.error) {
      const message = this.describe(r.error)
      r.error.dispose()
      return { kind: 'error', message }
    }
    return { kind: 'ok', handle: r.value }
  }

  /** Runs the script on one event (synchronously). */
  run(ev: EnrichedEvent, headers: readonly string[]): Outcome & { dropped: boolean; erased: boolean } {
    this.event = ev
    this.headers = headers
    this.dropped = false
    this.erased = false
    this.interrupted = false
    this.deadline = performance.now() + this.limits.timeMs
    try {
      let r
      if (this.prefetch.length > 0) {
        let pre = '['
        for (let k = 0; k < this.prefetch.length; k++) pre += (k ? ',' : '') + valueJson(ev, this.prefetch[k]!)
        const arg = this.vm.newString(pre + ']')
        r = this.vm.callFunction(this.runFn, this.vm.undefined, arg)
        arg.dispose()
      } else r = this.vm.callFunction(this.runFn, this.vm.undefined)
      if (r.error) {
        const message = this.describe(r.error)
        r.error.dispose()
        const limit = /^InternalError: (out of memory|stack overflow)/.test(message)
        return { kind: 'error', message, reset: this.interrupted || limit, dropped: this.dropped, erased: this.erased }
      }
      // always a string: '' for no result (asking the type would be one more call into the sandbox)
      const v = r.value
      const out = this.vm.getString(v)
      v.dispose()
      const text = out === '' ? null : out
      return { kind: 'ok', text, dropped: this.dropped, erased: this.erased }
    } finally {
      this.deadline = Infinity
      this.event = null
    }
  }

  /** `Name: message in <file> at line number L at column number C` (the first frame in the script). */
  private describe(err: QuickJSHandle): string {
    const vm = this.vm
    if (this.interrupted) {
      return `${INTERRUPTED} the script ran longer than its limit of ${this.limits.timeMs} ms per event in ${this.source}`
    }
    let text: string
    let stack = ''
    if (vm.typeof(err) === 'object') {
      const e = vm.dump(err) as { name?: unknown; message?: unknown; stack?: unknown }
      text = e.name !== undefined && e.message !== undefined ? `${String(e.name)}: ${String(e.message)}` : safeJson(e)
      if (typeof e.stack === 'string') stack = e.stack
    } else text = String(vm.dump(err))
    if (/^InternalError: out of memory/.test(text)) text += ` (the script's memory limit is ${Math.round(this.limits.memoryBytes / 1048576)} MB)`
    const escaped = this.source.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    const at = new RegExp(`\\(?${escaped}:(\\d+)(?::(\\d+))?`).exec(stack)
    return at ? `${text} in ${this.source} at line number ${at[1]}${at[2] ? ` at column number ${at[2]}` : ''}` : `${text} in ${this.source}`
  }

  /** The event API's getter of column `i`. */
  private get(i: number): QuickJSHandle {
    const vm = this.vm
    const ev = this.event
    if (ev === null || !Number.isInteger(i) || i < 0 || i >= FIELDS.length) return vm.null
    const v = fieldValue(ev, i)
    return v === null ? vm.null : typeof v === 'number' ? vm.newNumber(v) : vm.newString(v)
  }

  /** The event API's setter of column `i` (throws into the script with the field's name when the value does not fit). */
  private set(i: number, h: QuickJSHandle): void {
    const vm = this.vm
    const ev = this.event
    if (ev === null || !Number.isInteger(i) || i < 0 || i >= FIELDS.length) return
    const t = vm.typeof(h)
    const v: unknown = t === 'string' ? vm.getString(h) : t === 'number' ? vm.getNumber(h) : t === 'boolean' ? vm.dump(h) : t === 'undefined' ? null : vm.dump(h)
    setField(ev, i, v)
  }
}

/** What a getter gives for column `i`: numbers for numeric columns, text (JSON text for the JSON columns) or null. */
function fieldValue(ev: EnrichedEvent, i: number): string | number | null {
  if (JSON_FIELDS.has(i)) return i === F.contexts ? contextsText(ev.contexts) : i === F.unstruct_event ? unstructText(ev.unstruct) : contextsText(ev.derived)
  const v = ev.f[i]
  if (v === null || v === undefined) return null
  if (typeof v === 'number') return v
  return FIELD_KINDS[i] === 'dec' ? Number(v) : v
}

/** `fieldValue` as JSON. */
function valueJson(ev: EnrichedEvent, i: number): string {
  const v = fieldValue(ev, i)
  return v === null ? 'null' : typeof v === 'number' ? (Number.isFinite(v) ? String(v) : 'null') : quote(v)
}

/** The columns whose getter a script's source names (`getApp_id`, …). */
export function namedColumns(script: string): number[] {
  const byBean = new Map(FIELDS.map((f, i) => [beanName(f), i]))
  const cols = new Set<number>()
  for (const m of script.matchAll(/\bget([A-Z][A-Za-z_]*)/g)) {
    const i = byBean.get(m[1]!)
    if (i !== undefined) cols.add(i)
  }
  return [...cols].sort((a, b) => a - b)
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,3})?$/

/** Sets column `i` from a script's value, converted as the tracker's value would be; throws with the field's name when it does not fit. */
export function setField(ev: EnrichedEvent, i: number, v: unknown): void {
  const name = FIELDS[i]!
  const setter = `set${beanName(name)}`
  const fail = (expected: string): never => {
    throw new TypeError(`${setter}: expected ${expected}, got ${safeJson(v)}`)
  }
  if (i === F.contexts) {
    ev.contexts = v === null ? [] : parseContexts(v, 'contexts')
    return
  }
  if (i === F.unstruct_event) {
    ev.unstruct = v === null ? null : parseUnstruct(v)
    return
  }
  if (i === F.derived_contexts) return
  if (v === null) {
    ev.f[i] = null
    return
  }
  switch (FIELD_KINDS[i]) {
    case 'string':
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') fail('a string')
      ev.f[i] = tsv(String(v))
      return
    case 'int': {
      const n = typeof v === 'string' && /^[+-]?\d+$/.test(v) ? Number(v) : v
      if (typeof n !== 'number' || !Number.isInteger(n) || n > 2147483647 || n < -2147483648) fail('a 32-bit integer')
      ev.f[i] = n as number
      return
    }
    case 'bool':
      if (v === true || v === 1 || v === '1') ev.f[i] = 1
      else if (v === false || v === 0 || v === '0') ev.f[i] = 0
      else fail('true, false, 1 or 0')
      return
    case 'float':
      if (typeof v !== 'number' || !Number.isFinite(v)) fail('a finite number')
      ev.f[i] = v as number
      return
    case 'dec': {
      if (typeof v === 'number' && !Number.isFinite(v)) fail('a finite number')
      if (typeof v !== 'number' && typeof v !== 'string') fail('a number')
      const d = toDecimal(String(v))
      if (!d.ok || d.value === null) fail('a number')
      ev.f[i] = (d as { value: string }).value
      return
    }
    case 'ts': {
      if (typeof v !== 'string' || !TIMESTAMP.test(v)) fail('a timestamp "yyyy-MM-dd HH:mm:ss.SSS"')
      const [date, time] = (v as string).split(' ') as [string, string]
      const [hms, frac = ''] = time.split('.')
      ev.f[i] = `${date} ${hms}.${frac.padEnd(3, '0')}`
      return
    }
    default:
      return
  }
}

function parseDoc(v: unknown, what: string): unknown {
  if (typeof v !== 'string') throw new TypeError(`invalid ${what} json: expected the JSON text, got ${typeof v}`)
  const p = parseJson(v, MAX_JSON_DEPTH)
  if (!p.ok) throw new TypeError(`invalid ${what} json: ${p.error}`)
  return p.doc.value
}

function entity(doc: unknown, what: string): Entity {
  const sd = decodeSelfDescribingData(doc)
  if (!sd.ok) throw new TypeError(`invalid ${what} json: ${sd.message}`)
  return { schema: (doc as { schema: string }).schema, data: JSON.stringify((doc as { data: unknown }).data) }
}

function parseContexts(v: unknown, what: string): Entity[] {
  const doc = parseDoc(v, what)
  if (!isObject(doc) || typeof doc.schema !== 'string' || !Array.isArray(doc.data)) throw new TypeError(`invalid ${what} json: expected {"schema": "iglu:…", "data": [self-describing JSON…]}`)
  entity({ schema: doc.schema, data: null }, what)
  return doc.data.map((d) => entity(d, what))
}

function parseUnstruct(v: unknown): Entity {
  const doc = parseDoc(v, 'unstruct_event')
  if (!isObject(doc) || typeof doc.schema !== 'string' || !isObject(doc.data)) throw new TypeError('invalid unstruct_event json: expected {"schema": "iglu:…", "data": {"schema": "iglu:…", "data": …}}')
  entity({ schema: doc.schema, data: null }, 'unstruct_event')
  return entity(doc.data, 'unstruct_event')
}

/** Schema URIs scripts returned that are valid Iglu URIs. */
const validSchemas = new Set<string>()

/** The contexts of a script's output, or the failure message (Snowplow's wording). */
export function readOutput(text: string | null): { ok: true; contexts: Entity[] } | { ok: false; error: string } {
  if (text === null) return { ok: true, contexts: [] }
  const p = parseJson(text, MAX_JSON_DEPTH)
  if (!p.ok) return { ok: false, error: `Could not parse output JSON of Javascript function. Error: [${p.error}]` }
  const value = p.doc.value
  if (!Array.isArray(value)) return { ok: false, error: `Output of JavaScript function [${text}] could be parsed as JSON but is not read as an array` }
  const bad: string[] = []
  const contexts: Entity[] = []
  for (const el of value) {
    // the same few schemas recur: a valid one is remembered
    if (isObject(el) && typeof el.schema === 'string' && 'data' in el && validSchemas.has(el.schema)) {
      contexts.push({ schema: el.schema, data: JSON.stringify(el.data) })
      continue
    }
    const sd = decodeSelfDescribingData(el)
    if (!sd.ok) bad.push(`error code:[${sd.code}],json:[${JSON.stringify(el)}]`)
    else {
      const schema = (el as { schema: string }).schema
      if (validSchemas.size >= 1000) validSchemas.clear()
      validSchemas.add(schema)
      contexts.push({ schema, data: JSON.stringify((el as { data: unknown }).data) })
    }
  }
  if (bad.length > 0) return { ok: false, error: `Resulting contexts are not self-desribing. Error(s): [${bad.join(';')}]` }
  return { ok: true, contexts }
}

/** The script's text from `parameters.script` (base64, standard or URL-safe). */
export function scriptText(config: EnrichmentConfig): string {
  const encoded = config.parameters.script
  if (typeof encoded !== 'string') throw new ConfigError('parameters.script must be the script in base64')
  const b64 = encoded.replace(/-/g, '+').replace(/_/g, '/').replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw new ConfigError('parameters.script is not valid base64')
  const script = base64Text(b64)
  if (script.trim() === '') throw new ConfigError('parameters.script is empty: the JavaScript enrichment needs a script defining process(event, params)')
  return script
}

/**
 * The step of one script configuration, with the given limits. A script that
 * cannot start throws `ConfigError`, or with `exitOnCompileError` false gives
 * a step that fails every event with the reason.
 */
export async function createJavascriptEnrichment(config: EnrichmentConfig, legacyOrder: boolean, limits: ScriptLimits = SCRIPT_LIMITS, exitOnCompileError = true): Promise<Enrichment> {
  const script = scriptText(config)
  const params = config.parameters.config
  if (params !== undefined && !isObject(params)) throw new ConfigError('parameters.config must be an object')
  const paramsJson = JSON.stringify(params ?? {})
  const source = config.source
  const info = { schemaKey: toIgluUri(config.schema), identifier: IDENTIFIER }
  const failure = (error: string): StepResult => ({ failures: [{ enrichment: info, message: { error } } satisfies EnrichmentFailure] })
  const start = async (): Promise<Sandbox> => {
    const s = await Sandbox.start(source, script, paramsJson, limits)
    if (typeof s === 'string') throw new ConfigError(s)
    return s
  }
  let sandbox: Sandbox | null
  try {
    sandbox = await start()
  } catch (err) {
    if (exitOnCompileError || !(err instanceof ConfigError)) throw err
    const result = failure(`${err.message} (${source})`)
    return { id: `javascript:${source}`, order: orderOf('javascript', legacyOrder), run: () => result }
  }
  let restarting: Promise<Sandbox> | null = null

  const runOn = (sb: Sandbox, ev: EnrichedEvent, input: StepInput): StepResult => {
    let out: ReturnType<Sandbox['run']>
    try {
      out = sb.run(ev, input.raw.payload.headers)
    } catch (err) {
      // the host's own stack or the WebAssembly instance gave out: start afresh
      sandbox = null
      return failure(`Error during execution of JavaScript function: [${(err as Error).name}: ${(err as Error).message} in ${source}]`)
    }
    if (out.dropped) return { drop: true }
    if (out.kind === 'error') {
      if (out.reset) sandbox = null
      return failure(`Error during execution of JavaScript function: [${out.message}]`)
    }
    const r = readOutput(out.text)
    if (!r.ok) return failure(`${r.error} (${source})`)
    if (out.erased) ev.derived = []
    return r.contexts.length > 0 ? { contexts: r.contexts } : {}
  }

  return {
    id: `javascript:${source}`,
    order: orderOf('javascript', legacyOrder),
    run(ev, input) {
      if (sandbox !== null) return runOn(sandbox, ev, input)
      restarting ??= start().finally(() => {
        restarting = null
      })
      return restarting.then(
        (sb) => {
          sandbox = sb
          return runOn(sb, ev, input)
        },
        (err: Error) => failure(`Error during execution of JavaScript function: [${err.message} in ${source}]`),
      )
    },
  }
}

export const javascriptScript: EnrichmentModule = {
  vendor: 'com.snowplowanalytics.snowplow',
  name: 'javascript_script_config',
  models: [1],
  create: (config, ctx) => createJavascriptEnrichment(config, ctx.legacyOrder, SCRIPT_LIMITS, ctx.exitOnJsCompileError !== false),
}
