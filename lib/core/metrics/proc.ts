/**
 * Parsing of Linux's per-process files (`/proc/<pid>/stat`, `status`, `io`;
 * see proc(5)). Pure: the reading is in `lib/local/metrics.ts`.
 */

export interface ProcStat {
  readonly comm: string
  readonly state: string
  /** CPU time in user and kernel mode, in clock ticks. */
  readonly utimeTicks: number
  readonly stimeTicks: number
  readonly threads: number
  /** When the process started, in clock ticks after boot. */
  readonly startTimeTicks: number
}

/** `/proc/<pid>/stat`. The command name is in parentheses and may itself hold spaces and parentheses. */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(')
  const close = text.lastIndexOf(')')
  if (open < 0 || close < open) throw new Error('not a /proc/<pid>/stat line')
  const comm = text.slice(open + 1, close)
  // Fields after the command name, numbered from 3 (state) as in proc(5).
  const rest = text.slice(close + 2).trim().split(/\s+/)
  const field = (n: number) => Number(rest[n - 3])
  return { comm, state: rest[0]!, utimeTicks: field(14), stimeTicks: field(15), threads: field(20), startTimeTicks: field(22) }
}

export interface ProcStatus {
  readonly rssBytes: number | null
  readonly peakRssBytes: number | null
  readonly threads: number | null
}

/** `/proc/<pid>/status`: `VmRSS`, `VmHWM` (in kB) and `Threads`. */
export function parseProcStatus(text: string): ProcStatus {
  const get = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)
    return m ? Number(m[1]) : null
  }
  const kb = (n: number | null) => (n === null ? null : n * 1024)
  return { rssBytes: kb(get('VmRSS')), peakRssBytes: kb(get('VmHWM')), threads: get('Threads') }
}

/** `/proc/<pid>/io`: `rchar` and `wchar`, bytes through read/write calls of any kind (files, sockets, pipes). */
export function parseProcIo(text: string): { readBytes: number; writtenBytes: number } | null {
  const r = /^rchar:\s+(\d+)/m.exec(text)
  const w = /^wchar:\s+(\d+)/m.exec(text)
  return r && w ? { readBytes: Number(r[1]), writtenBytes: Number(w[1]) } : null
}

/** Seconds since boot, from `/proc/uptime`. */
export function parseUptime(text: string): number | null {
  const n = Number(text.trim().split(/\s+/)[0])
  return Number.isFinite(n) ? n : null
}
