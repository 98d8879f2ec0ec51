/**
 * Following a change counter that only grows (how many times this
 * deployment's registry was written to): read at most every `everyMs`, and
 * `onChange` called when a read finds it moved. Pure: the counter is a port,
 * the clock is passed in.
 */
export interface ChangeWatchOptions {
  /** The counter as stored now; a read that fails changes nothing (the next check reads again). */
  readonly read: () => Promise<number>
  /** The longest time between two reads, for a process that checks at least that often. */
  readonly everyMs: number
  /** The counter moved: drop what was derived from the changed source. */
  readonly onChange: () => void
}

export class ChangeWatch {
  private known: number | undefined
  private lastRead = Number.NEGATIVE_INFINITY
  private inflight: Promise<void> | undefined

  constructor(private readonly opts: ChangeWatchOptions) {}

  /**
   * Reads the counter when the last read began `everyMs` or more before
   * `now`; answers once the read (or the one already under way) is applied.
   * The first read counts as a change: what was cached before it may be older
   * than a change made before this process started following the counter.
   */
  check(now: number): Promise<void> {
    if (now - this.lastRead < this.opts.everyMs) return this.inflight ?? Promise.resolve()
    this.lastRead = now
    this.inflight ??= this.opts
      .read()
      .then(
        (n) => this.seen(n),
        () => undefined,
      )
      .finally(() => {
        this.inflight = undefined
      })
    return this.inflight
  }

  /** A value of the counter: calls `onChange` when it is above the one known. */
  seen(count: number): void {
    if (this.known !== undefined && count <= this.known) return
    this.known = count
    this.opts.onChange()
  }

  /**
   * A change this process made and applied itself (with the counter's value
   * after it): later reads of that value or one below are not changes.
   */
  applied(count: number): void {
    if (this.known === undefined || count > this.known) this.known = count
  }
}
