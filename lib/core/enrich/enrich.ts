/**
 * The enrich core: one stream record → enriched events, failed events, bad
 * rows and pii events, as data. No I/O besides schema lookups through the
 * resolver; the processing time and event ids are parameters.
 */
import { PatternBudget } from '../iglu/regex-engine'
import type { Resolver } from '../iglu/resolver'
import { adaptPayload, type AdapterContext, type AdapterResult, type RawEvent } from './adapters'
import {
  adapterBadRow,
  cpFormatViolation,
  enrichmentBadRow,
  rawEventJson,
  sizeViolation,
  type Processor,
} from './badrows'
import { formatTimestamp } from './convert'
import { EnrichedEvent, finish, toPartialJson, toTsv, type Entity } from './event'
import { DEFAULT_FIELD_LIMITS, F, isFieldName, NEVER_NULLED } from './fields'
import { asSelfDescribing, keepEntityAnswer, matchesCriterion, validateCached, validateData, validateEntityCached, type Validated } from './iglu'
import { compactJson, flat, parseJson, quote, sdjSpans, stringify, wrapperSpans, type SdjSpans } from './json'
import { compression, DECOMPRESSOR, loadThrift, MAX_DECOMPRESSED_BYTES, unpackCompressed, type LoadedPayload } from './payload'
import { EventStepInput, stepOrder, type Enrichment, type EnrichmentFailure, type StepInput, type StepResult } from './steps'
import { transform, type AtomicError } from './transform'
import { enrichmentFailureEntity, failureEntity, NO_VIOLATIONS, violationMessage, type Violation } from './violations'

export interface EnrichSettings {
  readonly resolver: Resolver
  readonly processor: Processor
  /** Configured enrichments (none yet: the built-in steps always run). */
  readonly enrichments?: readonly Enrichment[]
  /** Overrides of the default atomic field limits. */
  readonly atomicFieldsLimits?: Readonly<Record<string, number>>
  /** Emit events invalid against the atomic field limits as good events. */
  readonly acceptInvalid?: boolean
  /** A failed-event (incomplete) output exists: emit failed events, null oversized fields. */
  readonly emitFailed?: boolean
  /** A pii output exists. */
  readonly emitPii?: boolean
  readonly maxJsonDepth?: number
  /** Largest record each output takes, in bytes (UTF-8). */
  readonly maxRecordBytes?: { readonly good?: number; readonly bad?: number; readonly incomplete?: number; readonly pii?: number }
  readonly maxBytesSinglePayload?: number
  /** Webhooks served by HTTP services, by `vendor/version`. */
  readonly remoteAdapters?: AdapterContext['remoteAdapters']
  /** The webhook adapters' schemas replaced (default URI → configured URI; enrich config `adaptersSchemas`). */
  readonly schemaOverrides?: AdapterContext['schemaOverrides']
  /** Time the schema pattern checks of one stream record may take together (default `PATTERN_BUDGET_MS`). */
  readonly patternBudgetMs?: number
  /** The clock that times those checks, in milliseconds (default `performance.now`). */
  readonly patternClock?: () => number
}

/** Per batch: the processing time and the event-id source. */
export interface BatchContext {
  readonly etlTimestamp: number
  readonly newEventId: () => string
}

export type Output =
  | { readonly kind: 'good'; readonly tsv: string; readonly event: EnrichedEvent }
  | { readonly kind: 'incomplete'; readonly tsv: string; readonly event: EnrichedEvent }
  | { readonly kind: 'bad'; readonly json: string; readonly type: string }
  | { readonly kind: 'pii'; readonly tsv: string; readonly event: EnrichedEvent }

export interface RecordOutcome {
  readonly outputs: Output[]
  /** Collector payloads read from the record. */
  readonly payloads: number
  readonly dropped: number
  /** Events invalid against the atomic field limits (with why, for the `InvalidEnriched` log). */
  readonly invalid: { readonly tsv: string; readonly reasons: string[] }[]
  /** Earliest collector timestamp seen (epoch ms), for latency. */
  readonly collectorTimestamp: number | null
}

/** Where an event's outputs go. */
/** What a record's events produce; `patterns` bounds the pattern checks of the whole record (one collector payload or batch of them). */
type EventOut = { outputs: Output[]; dropped: number; invalid: RecordOutcome['invalid'][number][]; readonly patterns: PatternBudget }

/** A validated self-describing value: its schema and data text; undefined when a violation was recorded. */
type Checked = { uri: string; data: string; superseded?: { originalSchema: string; validatedWith: string } } | undefined

/** The outcome of validating one self-describing value whose text is in `text` at `spans` (see `checkSdj`). */
function checked(v: Validated, schemaUri: string, text: string, spans: SdjSpans, source: string, violations: Violation[], withData: boolean): Checked {
  if (!v.ok) {
    violations.push({ kind: 'IgluError', source, schemaKey: schemaUri, error: v.error, data: dataText(text, spans), reports: v.reports, schemaMessage: v.schemaMessage, resolution: v.resolution })
    return undefined
  }
  return { uri: v.uri, data: withData ? dataText(text, spans) : '', superseded: v.superseded }
}

/** The compact text of a self-describing value's data. */
function dataText(text: string, spans: SdjSpans): string {
  const ds = spans.data!
  return spans.compact ? text.slice(ds[0], ds[1]) : compactJson(text, ds[0], ds[1])
}

const UNSTRUCT_CRITERION = 'iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-*'
const CONTEXTS_CRITERION = 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-*'
const VALIDATION_INFO = 'iglu:com.snowplowanalytics.iglu/validation_info/jsonschema/1-0-0'
export const DEFAULT_MAX_RECORD_BYTES = 1_000_000

/** The enricher: settings fixed at start, `enrichRecord` per stream record. */
export class Enricher {
  private steps: Enrichment[]
  /** The atomic field limits as parallel tables: column, limit, name. */
  private readonly limitCols: Int32Array
  private readonly limitLengths: Float64Array
  private readonly limitNames: string[]
  private readonly vEtl: string
  private etlAt = Number.NaN
  private etlText = ''
  /**
   * Cached schemas are judged fresh at the time the record being enriched
   * started (one clock reading per record, not per lookup).
   */
  private readonly adapterContext: { readonly resolver: Resolver; readonly maxJsonDepth: number; now: number; readonly remoteAdapters: AdapterContext['remoteAdapters']; readonly schemaOverrides: AdapterContext['schemaOverrides'] }

  constructor(readonly settings: EnrichSettings) {
    this.steps = stepOrder(settings.enrichments ?? [])
    const limits = { ...DEFAULT_FIELD_LIMITS, ...settings.atomicFieldsLimits }
    // names that are no column never match a value
    const entries = Object.entries(limits).filter(([name]) => isFieldName(name))
    this.limitCols = Int32Array.from(entries, ([name]) => F[name as keyof typeof F])
    this.limitLengths = Float64Array.from(entries, ([, limit]) => limit)
    this.limitNames = entries.map(([name]) => name)
    this.vEtl = `${settings.processor.artifact}-${settings.processor.version}`
    this.adapterContext = { resolver: settings.resolver, maxJsonDepth: settings.maxJsonDepth ?? 50, now: 0, remoteAdapters: settings.remoteAdapters, schemaOverrides: settings.schemaOverrides }
  }

  /**
   * Swaps the configured enrichments (e.g. after an asset was refreshed).
   * Events already being enriched finish with the steps they started with.
   */
  replaceEnrichments(enrichments: readonly Enrichment[]): void {
    this.steps = stepOrder(enrichments)
  }

  get maxJsonDepth(): number {
    return this.settings.maxJsonDepth ?? 50
  }

  /**
   * Enriches one stream record (a Thrift payload, or a compressed batch of
   * them). Answers synchronously when every schema it needs is cached and every
   * step answers synchronously, else with a promise. Never throws: bad input
   * becomes outputs, and a defect a rejected promise.
   */
  enrichRecord(record: Uint8Array, batch: BatchContext): RecordOutcome | Promise<RecordOutcome> {
    const out: EventOut & { payloads: number; collectorTimestamp: number | null } = { outputs: [], payloads: 0, dropped: 0, invalid: [], collectorTimestamp: null, patterns: new PatternBudget(this.settings.patternBudgetMs, this.settings.patternClock) }
    this.adapterContext.now = this.settings.resolver.clock()
    try {
      const kind = compression(record)
      if (!kind) {
        const pending = this.enrichPayload(record, batch, out)
        return pending === undefined ? out : pending.then(() => out)
      }
      const u = unpackCompressed(record, kind, this.settings.maxBytesSinglePayload)
      if (u.failure !== undefined || u.oversized.length > 0 || u.tooLarge !== undefined) {
        const p = this.settings.processor
        const at = batch.etlTimestamp
        const max = this.settings.maxBytesSinglePayload ?? 10_000_000
        // as Snowplow's: the decompressor is named, and the bad row carries the whole record
        const exceeds = (n: number) => `Collector payload will exceed maximum allowed size of ${n} after ${kind === 'gzip' ? 'Gzip' : 'Zstd'} decompression`
        const decompression = exceeds(max)
        const b64 = Buffer.from(record).toString('base64')
        if (u.tooLarge !== undefined) {
          // a record that unpacks to more than a record may: one size violation, nothing read from it
          out.payloads++
          this.bad(out, 'size_violation', sizeViolation(p, at, MAX_DECOMPRESSED_BYTES, u.tooLarge, exceeds(MAX_DECOMPRESSED_BYTES), b64), at)
        }
        for (const actual of u.oversized) {
          out.payloads++
          this.bad(out, 'size_violation', sizeViolation(p, at, max, actual, decompression, b64), at)
        }
        if (u.failure !== undefined) {
          out.payloads++
          this.bad(out, 'collector_payload_format_violation', cpFormatViolation(p, at, DECOMPRESSOR, { error: u.failure }, record), at)
        }
      }
      const payloads = u.payloads
      for (let i = 0; i < payloads.length; i++) {
        const pending = this.enrichPayload(payloads[i]!, batch, out)
        if (pending !== undefined) return this.finishPayloads(pending, payloads, i + 1, batch, out).then(() => out)
      }
      return out
    } catch (defect) {
      return Promise.reject(defect)
    }
  }

  /** The payloads from `from` on, after `pending` (the one before) settled. */
  private async finishPayloads(pending: Promise<void>, payloads: Uint8Array[], from: number, batch: BatchContext, out: EventOut & { payloads: number; collectorTimestamp: number | null }): Promise<void> {
    await pending
    for (let i = from; i < payloads.length; i++) {
      const next = this.enrichPayload(payloads[i]!, batch, out)
      if (next !== undefined) await next
    }
  }

  /** One collector payload: its events' outputs go to `out`; a promise when a lookup or a step is asynchronous. */
  private enrichPayload(bytes: Uint8Array, batch: BatchContext, out: EventOut & { payloads: number; collectorTimestamp: number | null }): Promise<void> | undefined {
    out.payloads++
    const loaded = loadThrift(bytes)
    if (!loaded.ok) {
      const at = batch.etlTimestamp
      for (const m of loaded.messages) this.bad(out, 'collector_payload_format_violation', cpFormatViolation(this.settings.processor, at, loaded.loader, m, bytes), at)
      return undefined
    }
    const payload = loaded.payload
    if (out.collectorTimestamp === null || payload.timestamp < out.collectorTimestamp) out.collectorTimestamp = payload.timestamp
    const a = adaptPayload(payload, this.adapterContext)
    if (isPromise(a)) return Promise.resolve(a).then((adapted) => this.enrichAdapted(adapted, payload, batch, out))
    return this.enrichAdapted(a, payload, batch, out)
  }

  private enrichAdapted(adapted: AdapterResult, payload: LoadedPayload, batch: BatchContext, out: EventOut): Promise<void> | undefined {
    if (!adapted.ok) {
      const at = batch.etlTimestamp
      this.bad(out, adapted.badRow, adapterBadRow(adapted.badRow, this.settings.processor, at, payload, adapted.messages), at)
      return undefined
    }
    const events = adapted.events
    for (let j = 0; j < events.length; j++) {
      const done = this.enrichEvent(events[j]!, batch, out)
      if (done !== undefined) return this.finishEvents(done, events, j + 1, batch, out)
    }
    return undefined
  }

  /** The events from `from` on, after `pending` (the one before) settled. */
  private async finishEvents(pending: Promise<void>, events: RawEvent[], from: number, batch: BatchContext, out: EventOut): Promise<void> {
    await pending
    for (let j = from; j < events.length; j++) {
      const done = this.enrichEvent(events[j]!, batch, out)
      if (done !== undefined) await done
    }
  }

  /** A bad row, or a size violation when it is too big for the bad output. */
  private bad(out: { outputs: Output[] }, type: string, json: string, at: number): void {
    const max = this.settings.maxRecordBytes?.bad ?? DEFAULT_MAX_RECORD_BYTES
    const size = sizeOver(json, max)
    if (size > max) {
      out.outputs.push({ kind: 'bad', type: 'size_violation', json: sizeViolation(this.settings.processor, at, max, size, `Bad row exceeds the maximum allowed size of ${max} bytes`, json.slice(0, Math.floor(max / 10))) })
    } else out.outputs.push({ kind: 'bad', type, json: flat(json) })
  }

  /**
   * One raw event. Runs synchronously while every schema is cached and every
   * step answers synchronously; continues asynchronously from where a lookup
   * or an asynchronous step is needed.
   */
  private enrichEvent(raw: RawEvent, batch: BatchContext, out: EventOut): void | Promise<void> {
    const at = batch.etlTimestamp
    const ev = new EnrichedEvent()
    if (this.etlAt !== at) {
      this.etlAt = at
      this.etlText = formatTimestamp(at)
    }
    const t = transform(raw, ev, { etlTimestamp: this.etlText, vEtl: this.vEtl, eventId: batch.newEventId() })

    // Phase 1: atomic conversions, then the self-describing inputs.
    const e1: Violation[] = []
    if (t.errors.length > 0) e1.push({ kind: 'Atomic', errors: t.errors })
    const u = t.unstruct !== null ? this.unstructInput(t.unstruct, ev, e1, out.patterns) : undefined
    if (u !== undefined) return u.then(() => this.afterUnstruct(raw, batch, out, ev, t.contexts, e1))
    return this.afterUnstruct(raw, batch, out, ev, t.contexts, e1)
  }

  private afterUnstruct(raw: RawEvent, batch: BatchContext, out: EventOut, ev: EnrichedEvent, contexts: string | null, e1: Violation[]): void | Promise<void> {
    const c = contexts !== null ? this.contextsInput(contexts, ev, e1, out.patterns) : undefined
    const input: StepInput = new EventStepInput(raw)
    const steps = this.steps
    if (c !== undefined) return c.then(() => this.runSteps(steps, raw, batch, out, ev, e1, [], input, 0))
    return this.runSteps(steps, raw, batch, out, ev, e1, [], input, 0)
  }

  /** Phase 2: enrichments from step `from` on, failures accumulated. */
  private runSteps(steps: readonly Enrichment[], raw: RawEvent, batch: BatchContext, out: EventOut, ev: EnrichedEvent, e1: Violation[], e2: EnrichmentFailure[], input: StepInput, from: number): void | Promise<void> {
    for (let k = from; k < steps.length; k++) {
      const r = steps[k]!.run(ev, input)
      if (isPromise(r)) {
        return Promise.resolve(r).then((res) => {
          if (this.applyStep(res, ev, e2, out)) return
          return this.runSteps(steps, raw, batch, out, ev, e1, e2, input, k + 1)
        })
      }
      if (this.applyStep(r, ev, e2, out)) return
    }
    if (ev.derived.length === 0) return this.conclude(raw, batch, out, ev, e1, e2, NO_VIOLATIONS)
    const d = this.validateDerived(ev, out.patterns)
    if (isPromise(d)) return d.then((e3) => this.conclude(raw, batch, out, ev, e1, e2, e3))
    this.conclude(raw, batch, out, ev, e1, e2, d)
  }

  /**
   * Phase 3, first part: every context the enrichments derived is validated
   * against its schema; invalid ones are removed, each with a violation
   * (source `derived_contexts`).
   */
  private validateDerived(ev: EnrichedEvent, patterns: PatternBudget): Violation[] | Promise<Violation[]> {
    const resolver = this.settings.resolver
    const now = this.adapterContext.now
    const results: (Validated | Promise<Validated> | Violation)[] = ev.derived.map((e) => {
      const kept = validateEntityCached(resolver, e, now)
      if (kept !== undefined) return kept
      const sd = asSelfDescribing({ schema: e.schema, data: JSON.parse(e.data) as unknown })
      if (!sd.ok) return { kind: 'NotIglu', source: 'derived_contexts', json: `{"schema":${quote(e.schema)},"data":${e.data}}`, code: sd.code }
      const v = validateCached(resolver, sd.key, sd.data, now, patterns)
      if (v === undefined) return validateData(resolver, sd.key, sd.data, patterns)
      keepEntityAnswer(resolver, e, sd.key, v, now)
      return v
    })
    const settle = (all: (Validated | Violation)[]): Violation[] => {
      const violations: Violation[] = []
      const kept: Entity[] = []
      all.forEach((v, i) => {
        const e = ev.derived[i]!
        if ('kind' in v) violations.push(v)
        else if (v.ok) kept.push(e)
        else violations.push({ kind: 'IgluError', source: 'derived_contexts', schemaKey: e.schema, error: v.error, data: e.data, reports: v.reports, schemaMessage: v.schemaMessage, resolution: v.resolution })
      })
      if (violations.length > 0) ev.derived = kept
      return violations
    }
    return results.some(isPromise) ? Promise.all(results).then(settle) : settle(results as (Validated | Violation)[])
  }

  /** Takes a step's result; true when the event is dropped. */
  private applyStep(r: StepResult, ev: EnrichedEvent, e2: EnrichmentFailure[], out: EventOut): boolean {
    if (r.failures) for (const x of r.failures) e2.push(x)
    if (r.contexts && r.contexts.length > 0) ev.derived = [...r.contexts, ...ev.derived]
    if (r.drop) {
      out.dropped++
      return true
    }
    return false
  }

  /** Phase 3 and the outputs. */
  private conclude(raw: RawEvent, batch: BatchContext, out: EventOut, ev: EnrichedEvent, e1: Violation[], e2: EnrichmentFailure[], derivedViolations: readonly Violation[]): void {
    const s = this.settings
    const at = batch.etlTimestamp
    // Phase 3: atomic field lengths.
    let lengthErrors: AtomicError[] | undefined
    const f = ev.f
    const cols = this.limitCols
    const lengths = this.limitLengths
    for (let j = 0; j < cols.length; j++) {
      const i = cols[j]!
      const v = f[i]
      if (typeof v === 'string' && v.length > lengths[j]!) {
        const name = this.limitNames[j]!
        const limit = lengths[j]!
        if (lengthErrors === undefined) lengthErrors = []
        lengthErrors.push({ field: name, value: v, message: `Field is longer than maximum allowed size ${limit}`, keyword: 'atomic_field_length_exceeded' })
        if (s.emitFailed && !NEVER_NULLED.has(name)) f[i] = null
      }
    }
    let invalidReasons: string[] | undefined
    let e3 = derivedViolations
    if (lengthErrors !== undefined) {
      invalidReasons = lengthErrors.map((e) => `${e.field}: ${e.message}`)
      if (!s.acceptInvalid) e3 = [...e3, { kind: 'Atomic', errors: lengthErrors }]
    }

    if (e1.length === 0 && e2.length === 0 && e3.length === 0) {
      finish(ev)
      const line = toTsv(f)
      if (invalidReasons) out.invalid.push({ tsv: line, reasons: invalidReasons })
      const max = s.maxRecordBytes?.good ?? DEFAULT_MAX_RECORD_BYTES
      const size = sizeOver(line, max)
      if (size > max) {
        this.bad(out, 'size_violation', sizeViolation(s.processor, at, max, size, `Enriched event exceeds the maximum allowed size of ${max} bytes`, line.slice(0, Math.floor(max / 10))), at)
        return
      }
      out.outputs.push({ kind: 'good', tsv: line, event: ev })
      if (ev.pii !== null && s.emitPii) {
        const pii = piiEvent(ev, batch, this.vEtl)
        const piiLine = toTsv(pii.f)
        if (sizeOver(piiLine, s.maxRecordBytes?.pii ?? DEFAULT_MAX_RECORD_BYTES) === 0) out.outputs.push({ kind: 'pii', tsv: piiLine, event: pii })
      }
      return
    }

    // A failure: failure entities first in derived_contexts, then the bad row.
    const failures: Entity[] = []
    for (const v of e1) failures.push(failureEntity(s.processor, v, at))
    for (const x of e2) failures.push(enrichmentFailureEntity(s.processor, x, at))
    for (const v of e3) failures.push(failureEntity(s.processor, v, at))
    finish(ev, failures)
    const enrichedJson = toPartialJson(f)
    const rawJson = rawEventJson(raw.payload, raw.fields ?? raw.parameters)
    if (e1.length > 0) this.bad(out, 'schema_violations', enrichmentBadRow('schema_violations', s.processor, at, e1.map(violationMessage), enrichedJson, rawJson), at)
    else if (e2.length > 0) this.bad(out, 'enrichment_failures', enrichmentBadRow('enrichment_failures', s.processor, at, e2, enrichedJson, rawJson), at)
    else this.bad(out, 'schema_violations', enrichmentBadRow('schema_violations', s.processor, at, e3.map(violationMessage), enrichedJson, rawJson), at)
    if (s.emitFailed) {
      const line = toTsv(f)
      if (invalidReasons) out.invalid.push({ tsv: line, reasons: invalidReasons })
      // a failed event too big for its output is dropped
      if (sizeOver(line, s.maxRecordBytes?.incomplete ?? DEFAULT_MAX_RECORD_BYTES) === 0) out.outputs.push({ kind: 'incomplete', tsv: line, event: ev })
    } else if (invalidReasons) out.invalid.push({ tsv: toTsv(f), reasons: invalidReasons })
  }

  /**
   * Validates one self-describing value (`spans`: where it and its data sit in
   * `text`); returns its data text (compact, when `withData`) or records a violation.
   */
  private checkSdj(value: unknown, text: string, spans: SdjSpans, source: string, violations: Violation[], withData: boolean, patterns: PatternBudget): Checked | Promise<Checked> {
    const sd = asSelfDescribing(value)
    if (!sd.ok) {
      violations.push({ kind: 'NotIglu', source, json: compactJson(text, spans.span[0], spans.span[1]), code: sd.code })
      return undefined
    }
    const resolver = this.settings.resolver
    const v = validateCached(resolver, sd.key, sd.data, this.adapterContext.now, patterns)
    if (v === undefined) return validateData(resolver, sd.key, sd.data, patterns).then((r) => checked(r, sd.uri, text, spans, source, violations, withData))
    return checked(v, sd.uri, text, spans, source, violations, withData)
  }

  private noteSuperseded(ev: EnrichedEvent, sup: { originalSchema: string; validatedWith: string } | undefined): void {
    if (!sup) return
    const data = stringify(sup)
    const seen = ev.validationInfo
    for (let i = 0; i < seen.length; i++) if (seen[i]!.data === data) return
    seen.push({ schema: VALIDATION_INFO, data })
  }

  /** Parses a `contexts` or `unstruct_event` wrapper and checks its schema criterion; problems go to `violations`. */
  private wrapperInput(text: string, source: 'unstruct' | 'contexts', name: string, criterion: string, violations: Violation[]) {
    const parsed = parseJson(text, this.maxJsonDepth)
    if (!parsed.ok) {
      violations.push({ kind: 'NotJson', source, field: source, value: text, error: parsed.error })
      return undefined
    }
    const sd = asSelfDescribing(parsed.doc.value)
    if (!sd.ok) {
      violations.push({ kind: 'NotIglu', source, json: compactJson(text), code: sd.code })
      return undefined
    }
    if (!matchesCriterion(sd.key, 'com.snowplowanalytics.snowplow', name, 1, 0)) {
      violations.push({ kind: 'CriterionMismatch', source, schemaKey: sd.uri, criterion, data: compactJson(text) })
      return undefined
    }
    return { parsed, sd }
  }

  /**
   * A `contexts` or `unstruct_event` wrapper: parsed, its criterion checked,
   * its layout found and the wrapper validated against its schema (the check
   * may still be pending); undefined when a violation was recorded.
   */
  private wrapper(text: string, source: 'unstruct' | 'contexts', name: string, criterion: string, violations: Violation[], patterns: PatternBudget) {
    const w = this.wrapperInput(text, source, name, criterion, violations)
    if (!w) return undefined
    const whole = documentSpan(text)
    const layout = wrapperSpans(text, whole)
    const wrapper = this.checkSdj(w.parsed.doc.value, text, { span: whole, data: layout.data, compact: false }, source, violations, false, patterns)
    return { sd: w.sd, layout, wrapper }
  }

  private unstructInput(text: string, ev: EnrichedEvent, violations: Violation[], patterns: PatternBudget): Promise<void> | undefined {
    const w = this.wrapper(text, 'unstruct', 'unstruct_event', UNSTRUCT_CRITERION, violations, patterns)
    if (!w) return
    const { sd, layout, wrapper } = w
    const inner = layout.inner ?? sdjSpans(text, layout.data!)
    if (isPromise(wrapper)) return wrapper.then((w) => (w ? this.unstructInner(sd.data, text, inner, ev, violations, patterns) : undefined))
    if (!wrapper) return
    return this.unstructInner(sd.data, text, inner, ev, violations, patterns)
  }

  private unstructInner(value: unknown, text: string, spans: SdjSpans, ev: EnrichedEvent, violations: Violation[], patterns: PatternBudget): Promise<void> | undefined {
    const inner = this.checkSdj(value, text, spans, 'unstruct', violations, true, patterns)
    if (isPromise(inner)) return inner.then((i) => this.setUnstruct(ev, i))
    this.setUnstruct(ev, inner)
    return undefined
  }

  private setUnstruct(ev: EnrichedEvent, inner: Checked): void {
    if (!inner) return
    this.noteSuperseded(ev, inner.superseded)
    ev.unstruct = { schema: inner.uri, data: inner.data }
  }

  private contextsInput(text: string, ev: EnrichedEvent, violations: Violation[], patterns: PatternBudget): Promise<void> | undefined {
    const w = this.wrapper(text, 'contexts', 'contexts', CONTEXTS_CRITERION, violations, patterns)
    if (!w) return
    const { sd, layout, wrapper } = w
    const items = sd.data
    if (isPromise(wrapper)) {
      return wrapper.then((w) => (w && Array.isArray(items) ? this.contextItems(text, layout.elements!, items, 0, ev, violations, patterns) : undefined))
    }
    if (!wrapper || !Array.isArray(items)) return
    return this.contextItems(text, layout.elements!, items, 0, ev, violations, patterns)
  }

  /** The entities of a contexts array from `from` on, each validated on its own. */
  private contextItems(text: string, elements: SdjSpans[], items: unknown[], from: number, ev: EnrichedEvent, violations: Violation[], patterns: PatternBudget): Promise<void> | undefined {
    for (let i = from; i < items.length; i++) {
      const entity = this.checkSdj(items[i], text, elements[i]!, 'contexts', violations, true, patterns)
      if (isPromise(entity)) {
        return entity.then((e) => {
          this.addContext(ev, e)
          return this.contextItems(text, elements, items, i + 1, ev, violations, patterns)
        })
      }
      this.addContext(ev, entity)
    }
    return undefined
  }

  private addContext(ev: EnrichedEvent, entity: Checked): void {
    if (!entity) return
    this.noteSuperseded(ev, entity.superseded)
    ev.contexts.push({ schema: entity.uri, data: entity.data })
  }
}

/** The pii_transformation event of a good event (as Snowplow enrich 5.x emitted it). */
export function piiEvent(parent: EnrichedEvent, batch: BatchContext, vEtl: string): EnrichedEvent {
  const ev = new EnrichedEvent()
  const now = formatTimestamp(batch.etlTimestamp)
  ev.set('event_id', batch.newEventId())
  ev.set('platform', 'srv')
  ev.set('app_id', parent.get('app_id'))
  ev.set('etl_tstamp', parent.get('etl_tstamp'))
  ev.set('collector_tstamp', parent.get('collector_tstamp'))
  ev.set('event', 'pii_transformation')
  ev.set('event_vendor', 'com.snowplowanalytics.snowplow')
  ev.set('event_name', 'pii_transformation')
  ev.set('event_format', 'jsonschema')
  ev.set('event_version', '1-0-0')
  ev.set('derived_tstamp', now)
  ev.set('true_tstamp', now)
  ev.set('v_etl', vEtl)
  ev.unstruct = { schema: 'iglu:com.snowplowanalytics.snowplow/pii_transformation/jsonschema/1-0-0', data: parent.pii! }
  ev.contexts = [{ schema: 'iglu:com.snowplowanalytics.snowplow/parent_event/jsonschema/1-0-0', data: `{"parentEventId":${quote(parent.get('event_id') as string)}}` }]
  finish(ev)
  return ev
}

/**
 * The UTF-8 size of `s` when it is larger than `max` bytes, else 0. A string of
 * n UTF-16 code units takes at most 3n bytes, so short strings are not measured.
 */
function sizeOver(s: string, max: number): number {
  if (s.length * 3 <= max) return 0
  const size = byteLength(s)
  return size > max ? size : 0
}

/** Span of the single JSON value `text` holds (valid JSON: only whitespace around it). */
function documentSpan(text: string): [number, number] {
  let start = 0
  let end = text.length
  while (start < end && isWs(text.charCodeAt(start))) start++
  while (end > start && isWs(text.charCodeAt(end - 1))) end--
  return [start, end]
}

function isPromise<T>(x: T | PromiseLike<T>): x is PromiseLike<T> {
  return x !== null && typeof x === 'object' && typeof (x as { then?: unknown }).then === 'function'
}

function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9
}

function byteLength(s: string): number {
  // fast path: ASCII length equals byte length
  return s.length < 4096 && !/[^\x00-\x7f]/.test(s) ? s.length : Buffer.byteLength(s, 'utf8')
}
