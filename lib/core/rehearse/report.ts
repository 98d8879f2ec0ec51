/**
 * The rehearsal's report: what ran, what it counted, what it found; as one
 * JSON object or as text for a person.
 */
import type { Violation } from './template'

export interface RehearsalReport {
  /** No violation found. */
  readonly ok: boolean
  /** The cloud assembly read. */
  readonly assembly: string
  /** The parts that ran. */
  readonly ran: readonly string[]
  /** The parts of a full rehearsal that this version does not run yet. */
  readonly notRun: readonly string[]
  readonly stacks: number
  readonly resources: number
  /** Actions named by the policies, each checked against the IAM catalogue. */
  readonly policyActions: number
  readonly violations: readonly Violation[]
  readonly ms: number
}

export function formatReport(r: RehearsalReport): string {
  const lines = [
    `Rehearsal of ${r.assembly}: ${r.stacks} stacks, ${r.resources} resources, ${r.policyActions} policy actions checked in ${(r.ms / 1000).toFixed(1)} s.`,
    `Ran: ${r.ran.join('; ')}.`,
  ]
  if (r.notRun.length > 0) lines.push(`Not run yet: ${r.notRun.join('; ')}.`)
  if (r.violations.length === 0) lines.push('No violation.')
  else {
    lines.push(`${r.violations.length} violation${r.violations.length === 1 ? '' : 's'}:`)
    for (const v of r.violations) lines.push(`  ${v.stack}/${v.resource}: ${v.problem}`)
  }
  return `${lines.join('\n')}\n`
}
