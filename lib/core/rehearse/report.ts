/**
 * The rehearsal's report: what ran, what it counted, what it found; as one
 * JSON object or as text for a person. The run's fields (`functions`,
 * `calls`, `denied`…) are there when the assembly was run (./run-report.ts).
 */
import { formatRun, runProblems, type RunSection } from './run-report'
import type { Violation } from './template'

export interface StaticReport {
  /** The cloud assembly read. */
  readonly assembly: string
  /** The parts that ran. */
  readonly ran: readonly string[]
  /** The parts of a full rehearsal that did not run. */
  readonly notRun: readonly string[]
  readonly stacks: number
  readonly resources: number
  /** Actions named by the policies, each checked against the IAM catalogue. */
  readonly policyActions: number
  readonly violations: readonly Violation[]
  readonly ms: number
}

export interface RehearsalReport extends StaticReport, Partial<RunSection> {
  /** No violation, and (when the assembly ran) nothing denied, no function error, every scenario passed. */
  readonly ok: boolean
}

/** The report of the static checks, with the run's section when there is one. */
export function rehearsalReport(s: StaticReport, run?: RunSection): RehearsalReport {
  const ok = s.violations.length === 0 && (run === undefined || runProblems(run).length === 0)
  return { ok, ...s, ...(run ?? {}) }
}

export function formatReport(r: RehearsalReport): string {
  const lines = [
    `Rehearsal of ${r.assembly}: ${r.stacks} stacks, ${r.resources} resources, ${r.policyActions} policy actions checked in ${(r.ms / 1000).toFixed(1)} s.`,
    `Ran: ${r.ran.join('; ')}.`,
  ]
  if (r.notRun.length > 0) lines.push(`Not run: ${r.notRun.join('; ')}.`)
  if (r.violations.length === 0) lines.push('No violation.')
  else {
    lines.push(`${r.violations.length} violation${r.violations.length === 1 ? '' : 's'}:`)
    for (const v of r.violations) lines.push(`  ${v.stack}/${v.resource}: ${v.problem}`)
  }
  if (r.functions !== undefined) lines.push(...formatRun(r as RunSection))
  lines.push(r.ok ? 'Rehearsal passed.' : 'Rehearsal FAILED.')
  return `${lines.join('\n')}\n`
}
