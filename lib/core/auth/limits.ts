/**
 * What keeps sign-ins cheap for the rest of the process: a gate that lets a
 * few password hashes run at once (scrypt runs on libuv's small thread pool,
 * which file, zlib and DNS work share) and refuses beyond a short queue, and
 * the backoff of failed sign-ins per username and address.
 */

/** A task that waited in the queue past its limit, and was not run. */
export class GateTimeoutError extends Error {
  override readonly name = 'GateTimeoutError'
}

/**
 * Runs at most `concurrency` tasks at once, queues up to `queue` more for at
 * most `maxWaitMs` each (then they are given up with `GateTimeoutError`), and
 * refuses the rest.
 */
export class HashGate {
  private running = 0
  private readonly waiting: { start: () => void }[] = []

  constructor(private readonly concurrency: number, private readonly queue: number, private readonly maxWaitMs = Infinity) {
    if (!(concurrency >= 1) || !(queue >= 0)) throw new Error('HashGate: concurrency must be at least 1 and queue at least 0')
  }

  /** Whether a task given now would run or wait (rather than be refused). */
  get hasRoom(): boolean {
    return this.running < this.concurrency || this.waiting.length < this.queue
  }

  /** Runs `task` when a place is free; call only when `hasRoom`. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue) throw new Error('HashGate: full')
      await new Promise<void>((resolve, reject) => {
        const entry = { start: () => (clearTimeout(timer), resolve()) }
        const timer =
          this.maxWaitMs === Infinity
            ? undefined
            : setTimeout(() => {
                const i = this.waiting.indexOf(entry)
                if (i >= 0) this.waiting.splice(i, 1)
                reject(new GateTimeoutError(`waited ${this.maxWaitMs} ms`))
              }, this.maxWaitMs)
        this.waiting.push(entry)
      })
    } else this.running++
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      // the place goes to the next task in line, or is freed
      if (next) next.start()
      else this.running--
    }
  }
}

export interface BackoffOptions {
  /** Failures allowed before the first wait. */
  readonly freeFailures: number
  /** A key's failures are forgotten this long after its last one. */
  readonly forgetAfterMs: number
  /** The first wait (seconds); each further failure doubles it. */
  readonly firstWaitSeconds: number
  /** The longest wait (seconds). */
  readonly maxWaitSeconds: number
  /** Keys tracked at most (the oldest are dropped first). */
  readonly maxKeys: number
}

interface Entry {
  count: number
  lastAt: number
  blockedUntil: number
}

/**
 * Failed attempts per key (a username and an address): after `freeFailures`,
 * the key waits `firstWaitSeconds`, then twice as long after each further
 * failure, up to `maxWaitSeconds`. Attempts refused while waiting are not
 * failures (nothing was checked), so a wait never grows past the cap, and it
 * all ends `forgetAfterMs` after the last failure, or at a success.
 */
export class Backoff {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly o: BackoffOptions) {}

  /** Seconds `key` must still wait, 0 when it may try now. */
  waitSeconds(key: string, now: number): number {
    const e = this.entries.get(key)
    if (!e) return 0
    if (now - e.lastAt > this.o.forgetAfterMs) {
      this.entries.delete(key)
      return 0
    }
    return e.blockedUntil > now ? Math.ceil((e.blockedUntil - now) / 1000) : 0
  }

  /** Counts an attempt of `key` as failed (before it is checked: a success then clears it). */
  fail(key: string, now: number): void {
    let e = this.entries.get(key)
    if (e && now - e.lastAt > this.o.forgetAfterMs) e = undefined
    if (!e) {
      if (this.entries.size >= this.o.maxKeys) this.entries.delete(this.entries.keys().next().value as string)
      e = { count: 0, lastAt: now, blockedUntil: 0 }
    }
    // re-inserted: the map keeps keys in order of their last failure
    this.entries.delete(key)
    this.entries.set(key, e)
    e.count++
    e.lastAt = now
    const over = e.count - this.o.freeFailures
    if (over >= 0) e.blockedUntil = now + Math.min(this.o.firstWaitSeconds * 2 ** over, this.o.maxWaitSeconds) * 1000
  }

  /** Takes back a failure counted for an attempt that was not checked after all. */
  unfail(key: string): void {
    const e = this.entries.get(key)
    if (!e) return
    e.count--
    if (e.count < this.o.freeFailures) e.blockedUntil = 0
    if (e.count <= 0) this.entries.delete(key)
  }

  clear(key: string): void {
    this.entries.delete(key)
  }

  clearAll(): void {
    this.entries.clear()
  }
}
