/**
 * The part of the rehearsal's report that running the assembly gives: each
 * function's invocations and errors, each IAM check made (deduplicated, with
 * how often), the denials, the scenarios' outcomes and what was not run.
 *
 * The rule for `ok` (see `runProblems`): nothing denied, every scenario
 * passed, the run itself completed, and no function error. Every error the
 * function host counts while the rehearsal's scenarios run is unexpected (a
 * thrown error, a timeout, a crash, a 5xx answer): the scenarios only send
 * what a working deployment takes. A function that was never invoked is not
 * a failure while the scenarios do not reach every function: it is listed in
 * `notInvoked` and the text report warns about it.
 */

export interface CallRecord {
  readonly function: string
  readonly action: string
  readonly resource: string
  readonly allowed: boolean
}

export interface CallSummary extends CallRecord {
  /** How many times this call was checked. */
  readonly count: number
}

export interface FunctionRun {
  readonly logicalId: string
  readonly invocations: number
  readonly errors: number
  /** The last lines its log had, for a function with errors. */
  readonly log?: readonly string[]
}

export interface ScenarioOutcome {
  readonly name: string
  readonly ok: boolean
  /** Why it failed (or what it could not check). */
  readonly problem?: string
  /** Not run, and why (it passes): a part it needs is not stood in. */
  readonly skipped?: string
  /** What it checked. */
  readonly detail?: string
  readonly ms?: number
}

export interface Skipped {
  /** What was not run: a mapping, a schedule, a scenario, a part. */
  readonly what: string
  readonly reason: string
}

export interface TeardownSummary {
  readonly ok: boolean
  readonly steps: readonly { readonly step: string; readonly ok: boolean; readonly detail?: string }[]
  readonly deleted: number
  readonly left: readonly string[]
}

export interface RunSection {
  readonly functions: readonly FunctionRun[]
  readonly calls: readonly CallSummary[]
  readonly denied: readonly CallSummary[]
  readonly notInvoked: readonly string[]
  readonly scenarios: readonly ScenarioOutcome[]
  readonly skipped: readonly Skipped[]
  /** Resources created on the emulators from the templates, and those that could not be. */
  readonly created: number
  readonly notCreated: readonly { readonly stack: string; readonly resource: string; readonly problem: string }[]
  /** `floe teardown`'s plan and run against the rehearsal's resources, read back. */
  readonly teardown?: TeardownSummary
  /** Set when the run could not complete (the emulators did not start…). */
  readonly failure?: string
}

/** The calls checked, one entry per distinct `{function, action, resource, allowed}`, in a stable order. */
export function summarizeCalls(calls: readonly CallRecord[]): CallSummary[] {
  const counts = new Map<string, { call: CallRecord; count: number }>()
  for (const c of calls) {
    const key = JSON.stringify([c.function, c.action, c.resource, c.allowed])
    const seen = counts.get(key)
    if (seen) seen.count++
    else counts.set(key, { call: { function: c.function, action: c.action, resource: c.resource, allowed: c.allowed }, count: 1 })
  }
  return [...counts.values()]
    .map(({ call, count }) => ({ ...call, count }))
    .sort((a, b) => a.function.localeCompare(b.function) || a.action.localeCompare(b.action) || a.resource.localeCompare(b.resource) || Number(a.allowed) - Number(b.allowed))
}

/** What makes the run fail, one line each (none: it passed). */
export function runProblems(r: RunSection): string[] {
  const out: string[] = []
  if (r.failure !== undefined) out.push(`the run did not complete: ${r.failure}`)
  for (const d of r.denied) out.push(`denied: ${d.function} ${d.action} on ${d.resource}${d.count > 1 ? ` (${d.count} times)` : ''}`)
  for (const f of r.functions) if (f.errors > 0) out.push(`${f.logicalId}: ${f.errors} error${f.errors === 1 ? '' : 's'} in ${f.invocations} invocation${f.invocations === 1 ? '' : 's'}`)
  for (const s of r.scenarios) if (!s.ok) out.push(`scenario failed: ${s.name}${s.problem ? `: ${s.problem}` : ''}`)
  for (const n of r.notCreated) out.push(`not created: ${n.stack}/${n.resource}: ${n.problem}`)
  if (r.teardown && !r.teardown.ok) {
    const failed = r.teardown.steps.find((s) => !s.ok)
    out.push(`the teardown failed${failed ? ` at ${failed.step}: ${failed.detail ?? ''}` : ''}${r.teardown.left.length ? `; left: ${r.teardown.left.join(', ')}` : ''}`)
  }
  return out
}

/** The run's part of the text report. */
export function formatRun(r: RunSection): string[] {
  const invoked = r.functions.filter((f) => f.invocations > 0).length
  const lines = [
    `Run: ${invoked} of ${r.functions.length} functions invoked, ${r.calls.reduce((n, c) => n + c.count, 0)} calls checked (${r.calls.length} distinct), ${r.denied.length} denied, ${r.created} resources created; scenarios ${r.scenarios.filter((s) => s.ok).length}/${r.scenarios.length} passed.`,
  ]
  const problems = runProblems(r)
  if (problems.length > 0) {
    lines.push(`${problems.length} problem${problems.length === 1 ? '' : 's'} in the run:`)
    for (const p of problems) lines.push(`  ${p}`)
    for (const f of r.functions) if (f.errors > 0 && f.log?.length) for (const l of f.log) lines.push(`    ${f.logicalId} log: ${l}`)
  }
  if (r.teardown) lines.push(`Teardown rehearsed: ${r.teardown.steps.length} steps, ${r.teardown.deleted} resources deleted and read back as gone${r.teardown.left.length ? `, ${r.teardown.left.length} left` : ''}.`)
  if (r.notInvoked.length > 0) lines.push(`Warning: not invoked by the rehearsal (not proven): ${r.notInvoked.join(', ')}.`)
  const skippedScenarios = r.scenarios.filter((s) => s.skipped !== undefined)
  if (r.skipped.length + skippedScenarios.length > 0) {
    lines.push('Not run:')
    for (const s of r.skipped) lines.push(`  ${s.what}: ${s.reason}`)
    for (const s of skippedScenarios) lines.push(`  scenario ${s.name}: ${s.skipped}`)
  }
  return lines
}
