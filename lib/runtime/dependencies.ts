/**
 * The state of the services a process depends on, as its supervisor sees
 * them (locally: the emulators). `/health` reports what is down; on AWS
 * nothing marks a dependency down and `/health` answers from the function alone.
 */

export interface DownDependency {
  readonly component: string
  readonly since: string
  readonly reason: string
}

const down = new Map<string, DownDependency>()

export function markDown(component: string, reason: string, now = new Date()): void {
  if (!down.has(component)) down.set(component, { component, since: now.toISOString(), reason })
}

export function markUp(component: string): void {
  down.delete(component)
}

export function downDependencies(): DownDependency[] {
  return [...down.values()]
}
