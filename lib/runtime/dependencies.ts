/**
 * The state of the services a process depends on, as its supervisor sees
 * them (locally: the emulators, and the stream triggers: a function that
 * cannot start or fails every batch is down, one off for lack of the licence
 * is off on purpose). `/health` reports them (see `lib/core/health/report.ts`);
 * on AWS nothing marks a dependency and `/health` answers from the function
 * alone.
 */
import type { HealthState } from '../core/health/report'

export interface DownDependency {
  readonly component: string
  readonly since: string
  readonly reason: string
  readonly state: HealthState
}

const down = new Map<string, DownDependency>()

function mark(component: string, state: HealthState, reason: string, now: Date): void {
  const before = down.get(component)
  const since = before?.state === state ? before.since : now.toISOString()
  down.set(component, { component, since, reason, state })
}

/** Marks `component` down (a fault) with `reason`; marked again, it keeps the time it went down and takes the new reason. */
export function markDown(component: string, reason: string, now = new Date()): void {
  mark(component, 'fault', reason, now)
}

/** Marks `component` off on purpose (a deliberate state: events wait, the instance takes them), with `reason`. */
export function markOff(component: string, reason: string, now = new Date()): void {
  mark(component, 'deliberate', reason, now)
}

export function markUp(component: string): void {
  down.delete(component)
}

export function downDependencies(): DownDependency[] {
  return [...down.values()]
}
