/**
 * Recovery runs whose process died, on this deployment: a run's owner is
 * its process (`<host>:<pid>`); locally a run whose process has exited is
 * ended at once (at the next run, the next start, or its status), on AWS
 * when its heartbeat is stale (see `lib/core/recover/runs.ts`).
 */
import { hostname } from 'node:os'
import { endDeadRuns, type EndedRun } from '../core/recover/runs'
import type { SearchDb } from '../core/search/store'
import { LOCAL_ENDPOINTS_ENV } from './clients'

/** This process as a run's owner: `<host>:<pid>`. */
export const thisOwner = () => `${hostname()}:${process.pid}`

/** Whether the process owning a run is gone: known locally only (a process of this machine that has exited). */
export function ownerGone(owner: string): boolean {
  const m = /^(.*):(\d+)$/.exec(owner)
  if (!m || m[1] !== hostname()) return false
  const pid = Number(m[2])
  if (pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return false
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

/** On the local stack (not on AWS, where one host name and process id may stand for many functions). */
const isLocal = () => process.env[LOCAL_ENDPOINTS_ENV] !== undefined

/** Ends the runs whose process died (a stale heartbeat; locally also a process that has exited), releasing their pending claims. */
export async function endDeadRecoveryRuns(db: SearchDb, now = Date.now()): Promise<EndedRun[]> {
  return endDeadRuns(db, { now, ...(isLocal() ? { ownerGone } : {}) })
}


/** `FLOE_RECOVER_FAULT=<step>:<page>`: a fault-injection point for tests of a kill mid-run (never set otherwise). */
export const FAULT_ENV = 'FLOE_RECOVER_FAULT'
export type FaultStep = 'claimed' | 'written' | 'marked'

/**
 * The process kills itself (SIGKILL: nothing after it runs) at `step` of page
 * `page` (from 0) when `FLOE_RECOVER_FAULT` names them; otherwise nothing.
 */
export function faultPoint(env: Readonly<Record<string, string | undefined>> = process.env): (step: FaultStep, page: number) => void {
  const m = /^(claimed|written|marked):(\d+)$/.exec(env[FAULT_ENV] ?? '')
  if (!m) return () => undefined
  return (step, page) => {
    if (step === m[1] && page === Number(m[2])) process.kill(process.pid, 'SIGKILL')
  }
}
