/**
 * Knowing when the search store was written, for `/micro/wait`: the loaders
 * raise a counter (`store_changes`) in the same transaction as the rows they
 * store, so the counter changes exactly when those rows become visible, from
 * any process (the loader may run in another process or function than the API
 * that waits: on AWS the loader's and the API's functions are apart, over
 * Aurora through the Data API, which has no LISTEN).
 *
 * One `StoreWatch` per process serves every waiter: while at least one waits,
 * it reads the counter once per `intervalMs` (one statement per tick for all
 * of them, none when nobody waits), and sooner when told that this process
 * wrote (`nudge`, e.g. a loader in the same process). Waiters wake only when
 * the counter moved, and only then run their own query again.
 */
import { tablesOf, type SearchDb, type SqlClient } from './store'

/** Raises the store's change counter; call it inside the transaction that writes the rows. */
export async function bumpStoreVersion(tx: SearchDb): Promise<void> {
  await tx.sql.query(`UPDATE ${tablesOf(tx).changes} SET version = version + 1 WHERE id = 1`)
}

/** The store's change counter as text (it only ever grows, until the table is made again). */
export async function storeVersion(db: SearchDb): Promise<string> {
  const r = await db.sql.query<{ v: string }>(`SELECT version::text AS v FROM ${tablesOf(db).changes} WHERE id = 1`)
  return r.rows[0]?.v ?? '0'
}

/** Runs `fn` in a transaction of `db` and raises the change counter at its end (the row lock is held only until the commit). */
export async function writingTransaction<T>(db: SearchDb, fn: (tx: SqlClient) => Promise<T>): Promise<T> {
  return db.sql.transaction(async (sql) => {
    const out = await fn(sql)
    await bumpStoreVersion({ ...db, sql })
    return out
  })
}

/** The clock and timers a watch runs on (passed in, so tests drive time). */
export interface WatchClock {
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export const systemClock: WatchClock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
}

export interface StoreWatchOptions {
  /** Reads the change counter (`storeVersion` of the current store). */
  readonly read: () => Promise<string>
  /** Time between two reads while someone waits. */
  readonly intervalMs: number
  readonly clock?: WatchClock
  /** What to do with a failed read (the watch reads again at the next tick). */
  readonly onError?: (err: unknown) => void
}

interface Waiter {
  readonly since: string
  readonly resolve: (version: string | undefined) => void
  readonly timer: unknown
}

/** Default time between two reads of the counter while someone waits. */
export const DEFAULT_WATCH_INTERVAL_MS = 250

export class StoreWatch {
  private readonly waiters = new Set<Waiter>()
  private readonly clock: WatchClock
  private running = false
  private tick: { handle: unknown; fire: () => void } | undefined
  private nudged = false

  constructor(private readonly o: StoreWatchOptions) {
    this.clock = o.clock ?? systemClock
  }

  /** How many wait now. */
  get waiting(): number {
    return this.waiters.size
  }

  /** The counter now (one read). */
  current(): Promise<string> {
    return this.o.read()
  }

  /**
   * Resolves with the counter once it differs from `since`, or with
   * undefined after `ms` (or at once when `ms` is not positive).
   */
  changedSince(since: string, ms: number): Promise<string | undefined> {
    if (ms <= 0) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      const waiter: Waiter = {
        since,
        resolve: (v) => {
          if (!this.waiters.delete(waiter)) return
          this.clock.clearTimeout(waiter.timer)
          resolve(v)
        },
        timer: this.clock.setTimeout(() => waiter.resolve(undefined), ms),
      }
      this.waiters.add(waiter)
      this.start()
    })
  }

  /** This process wrote to the store: read the counter now rather than at the next tick. */
  nudge(): void {
    if (!this.running) return
    this.nudged = true
    this.tick?.fire()
  }

  private start(): void {
    if (this.running) return
    this.running = true
    void this.loop()
  }

  private async loop(): Promise<void> {
    try {
      while (this.waiters.size > 0) {
        this.nudged = false
        let v: string | undefined
        try {
          v = await this.o.read()
        } catch (err) {
          this.o.onError?.(err)
        }
        if (v !== undefined) for (const w of [...this.waiters]) if (w.since !== v) w.resolve(v)
        if (this.waiters.size === 0) break
        if (!this.nudged) await this.sleep(this.o.intervalMs)
      }
    } finally {
      this.running = false
      // a waiter that came in as the loop ended
      if (this.waiters.size > 0) this.start()
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const fire = () => {
        if (this.tick?.fire !== fire) return
        this.clock.clearTimeout(this.tick.handle)
        this.tick = undefined
        resolve()
      }
      this.tick = { handle: this.clock.setTimeout(fire, ms), fire }
    })
  }
}
