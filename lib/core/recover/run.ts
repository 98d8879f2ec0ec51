/**
 * A recovery run: the selected bad rows, page by page, read, fixed with the
 * steps, judged by enrich run in-process (the deployment's configuration and
 * registry), and, unless it is a dry run, claimed (so no other run replays
 * them), replayed to the raw stream as collector payloads and marked. An
 * event the steps break becomes a `recovery_error` bad row and the run goes
 * on. Effects go through ports; this module holds the rules and the counts.
 *
 * Crash safety: a claim is pending until the page's payloads are written,
 * and only then finished (the rows marked recovered). Killed before the
 * write, the rows are released (by this run on an error, or by whoever ends
 * the dead run) and selectable again; killed after it, they are released
 * too and replayed again by a later run, which the search store keeps once
 * per event id.
 */
import { stringify } from '../enrich/json'
import { encodeCollectorPayload } from '../thrift/collector-payload'
import { eventIdsOf, fixEvent, readBadRow, toCollectorPayload } from './events'
import type { RecoverySteps } from './steps'
import { reasonKey, recoverRow } from './event-recovery/apply'

export const RECOVERY_ERROR_SCHEMA = 'iglu:io.floe/recovery_error/jsonschema/1-0-0'
/** How many distinct failure reasons a report lists. */
export const MAX_REASONS = 10

/** A selected bad row: its id in the search store (a hash of its text) and its text. */
export interface Candidate {
  readonly id: string
  readonly line: string
}

/** What enrich made of one replayed payload: good events, and the bad rows it would write. */
export interface Verdict {
  readonly good: number
  readonly bad: readonly string[]
}

export interface RecoverPorts {
  /** The selected bad rows not recovered yet, a page at a time. */
  pages(): AsyncIterable<readonly Candidate[]>
  /** Enriches the payloads in-process, writing nothing; one verdict per payload. */
  enrich(payloads: readonly Uint8Array[]): Promise<readonly Verdict[]>
  /** Claims bad rows for the run, pending; answers the ids it got (another run holds the rest). */
  claim(ids: readonly string[]): Promise<ReadonlySet<string>>
  /** After their payloads were written: the claims are replayed (with the event ids of each payload) and the bad rows marked recovered. */
  finish(rows: readonly { readonly id: string; readonly eventIds: readonly string[] | null }[]): Promise<void>
  /** Gives pending claims back (their replay could not be written). */
  release(ids: readonly string[]): Promise<void>
  writeRaw(payloads: readonly Uint8Array[]): Promise<void>
  writeBad(lines: readonly string[]): Promise<void>
  now(): number
}

export interface RecoverOptions {
  readonly runId: string
  readonly steps: RecoverySteps
  readonly dryRun: boolean
  readonly processor: { readonly artifact: string; readonly version: string }
  /** Called after each page with the counts so far. */
  readonly progress?: (r: RecoverReport) => void
  /** Called with the event ids of each payload of a page written (what the run's outcome is followed by). */
  readonly replayed?: (eventIds: readonly (readonly string[])[]) => void
}

export interface RecoverReport {
  readonly runId: string
  readonly dryRun: boolean
  /** Bad rows the selection matched, not recovered before. */
  selected: number
  /** Bad rows of a kind that holds no event to replay (size violations, undecodable records, …). */
  unrecoverable: number
  /** Events ready to replay once the steps were applied (all of them when there are no steps). */
  fixed: number
  /** Events the steps broke (each becomes a `recovery_error` bad row on a replay). */
  broken: number
  /** Preview (enriched in-process, not what the running enrich made of the replay): would be good. */
  wouldBeGood: number
  /** Preview (enriched in-process): would fail again. */
  stillFailing: number
  /** Written to the raw stream (0 on a dry run). */
  replayed: number
  /** Rows another run claimed first (concurrent runs on one selection). */
  claimedElsewhere: number
  /** The first reasons, most frequent first. */
  reasons: { reason: string; count: number }[]
}

/** A short reason from a bad row enrich would write: its type and the first message. */
export function reasonOf(badRow: string): string {
  try {
    const row = JSON.parse(badRow) as { schema?: string; data?: { failure?: { messages?: unknown[]; error?: string } } }
    const type = /^iglu:[^/]+\/([^/]+)\//.exec(row.schema ?? '')?.[1] ?? 'bad row'
    const m = row.data?.failure?.messages?.[0] as Record<string, any> | undefined
    if (!m) return row.data?.failure?.error ? `${type}: ${row.data.failure.error}` : type
    const parts: string[] = []
    if (typeof m.schemaKey === 'string') parts.push(m.schemaKey)
    const err = m.error
    if (err && typeof err === 'object') {
      if (typeof err.error === 'string') parts.push(err.error)
      const detail = err.dataReports?.[0]?.message ?? err.lookupHistory?.[0]?.errors?.[0]?.error
      if (typeof detail === 'string') parts.push(detail)
    } else if (typeof err === 'string') parts.push(err)
    if (typeof m.message === 'string') parts.push(m.message)
    if (typeof m.expectation === 'string') parts.push(m.expectation)
    if (parts.length === 0) parts.push(JSON.stringify(m).slice(0, 200))
    return `${type}: ${parts.join(' · ')}`.slice(0, 500)
  } catch {
    return 'bad row'
  }
}

/** The bad row of an event the steps broke: the error and the run, with the bad row being recovered. */
export function recoveryErrorRow(o: RecoverOptions, at: number, error: string, line: string): string {
  return stringify({
    schema: RECOVERY_ERROR_SCHEMA,
    data: { processor: o.processor, failure: { timestamp: new Date(at).toISOString(), error, run: o.runId, steps: o.steps.name }, payload: line },
  })
}

export function emptyReport(runId: string, dryRun: boolean): RecoverReport {
  return { runId, dryRun, selected: 0, unrecoverable: 0, fixed: 0, broken: 0, wouldBeGood: 0, stillFailing: 0, replayed: 0, claimedElsewhere: 0, reasons: [] }
}

export async function recover(ports: RecoverPorts, o: RecoverOptions): Promise<RecoverReport> {
  const report = emptyReport(o.runId, o.dryRun)
  const reasons = new Map<string, number>()
  const note = (r: string) => reasons.set(r, (reasons.get(r) ?? 0) + 1)
  const publish = () => {
    report.reasons = [...reasons].sort((a, b) => b[1] - a[1]).slice(0, MAX_REASONS).map(([reason, count]) => ({ reason, count }))
  }
  for await (const page of ports.pages()) {
    report.selected += page.length
    const ready: { id: string; payload: Uint8Array; eventIds: string[] }[] = []
    const broken: { id: string; row: string }[] = []
    for (const c of page) {
      if (o.steps.eventRecovery) {
        // a snowplow-event-recovery configuration decides per row (flows, conditions, steps)
        const r = recoverRow(c.line, o.steps.eventRecovery)
        if (r.ok && r.value.kind === 'thrift') ready.push({ id: c.id, payload: r.value.bytes, eventIds: [] })
        else if (r.ok && r.value.kind === 'event') ready.push({ id: c.id, payload: encodeCollectorPayload(toCollectorPayload(r.value.event, o.runId)), eventIds: eventIdsOf(r.value.event) })
        else if (!r.ok && r.error.startsWith('size_violation')) {
          report.unrecoverable++
          note(`not replayable: ${r.error}`)
        } else if (!r.ok) {
          broken.push({ id: c.id, row: recoveryErrorRow(o, ports.now(), r.error, c.line) })
          note(`not recovered by the configuration: ${reasonKey(r.error)}`)
        }
        continue
      }
      const read = readBadRow(c.line)
      if (!read.ok) {
        report.unrecoverable++
        note(`not replayable: ${read.reason}`)
        continue
      }
      const fixed = fixEvent(read.event, o.steps)
      if (!fixed.ok) {
        broken.push({ id: c.id, row: recoveryErrorRow(o, ports.now(), fixed.error, c.line) })
        note(`broken by the steps: ${fixed.error}`)
        continue
      }
      ready.push({ id: c.id, payload: encodeCollectorPayload(toCollectorPayload(fixed.event, o.runId)), eventIds: eventIdsOf(fixed.event) })
    }
    let mine = ready
    let mineBroken = broken
    if (!o.dryRun) {
      const claimed = await ports.claim([...ready.map((r) => r.id), ...broken.map((b) => b.id)])
      mine = ready.filter((r) => claimed.has(r.id))
      mineBroken = broken.filter((b) => claimed.has(b.id))
      report.claimedElsewhere += ready.length + broken.length - mine.length - mineBroken.length
    }
    const taken = [...mine.map((r) => r.id), ...mineBroken.map((b) => b.id)]
    try {
      report.fixed += mine.length
      report.broken += mineBroken.length
      const verdicts = mine.length > 0 ? await ports.enrich(mine.map((r) => r.payload)) : []
      for (const v of verdicts) {
        if (v.bad.length === 0 && v.good > 0) report.wouldBeGood++
        else {
          report.stillFailing++
          note(v.bad.length > 0 ? reasonOf(v.bad[0]!) : 'no event')
        }
      }
      if (!o.dryRun && taken.length > 0) {
        if (mine.length > 0) await ports.writeRaw(mine.map((r) => r.payload))
        if (mineBroken.length > 0) await ports.writeBad(mineBroken.map((b) => b.row))
        await ports.finish([...mine.map((r) => ({ id: r.id, eventIds: r.eventIds })), ...mineBroken.map((b) => ({ id: b.id, eventIds: null }))])
        report.replayed += mine.length
        o.replayed?.(mine.map((r) => r.eventIds))
      }
    } catch (err) {
      // pending claims go back (a run killed here instead leaves them to whoever ends it)
      if (!o.dryRun && taken.length > 0) await ports.release(taken).catch(() => undefined)
      throw err
    }
    publish()
    o.progress?.(report)
  }
  publish()
  return report
}
