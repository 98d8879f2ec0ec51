/**
 * The state of the services a process depends on, as its supervisor sees
 * them (locally: the emulators, and the stream triggers: a function that
 * cannot start, fails every batch, or is off for lack of the licence).
 * `/health` reports what is down; on AWS nothing marks a dependency down and
 * `/health` answers from the function alone.
 */

export interface DownDependency {
  readonly component: string
  readonly since: string
  readonly reason: string
}

const down = new Map<string, DownDependency>()

/** Marks `component` down with `reason`; marked again, it keeps the time it went down and takes the new reason. */
export function markDown(component: string, reason: string, now = new Date()): void {
  const since = down.get(component)?.since ?? now.toISOString()
  down.set(component, { component, since, reason })
}

export function markUp(component: string): void {
  down.delete(component)
}

export function downDependencies(): DownDependency[] {
  return [...down.values()]
}
