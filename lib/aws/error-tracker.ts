/**
 * Where a function reports its errors (`monitoring.sentry.dsn`: Sentry, see
 * `./sentry.ts`). Errors are queued as they are captured and sent by `flush`,
 * which a function awaits before its invocation ends (Lambda freezes the
 * process afterwards).
 */

export interface ErrorTracker {
  /** Queues an error, with tags describing where it happened. */
  capture(err: unknown, tags?: Readonly<Record<string, string>>): void
  /** Sends what is queued; false when it could not within the time. */
  flush(timeoutMs?: number): Promise<boolean>
}

/** No tracker configured: errors are only logged. */
export const noErrorTracker: ErrorTracker = {
  capture() {},
  flush: async () => true,
}

/**
 * A tracker built on first use: the Sentry client (and its module) is loaded
 * only by a function whose configuration names a DSN, and only once an error happens.
 */
export function deferredTracker(build: () => Promise<ErrorTracker>): ErrorTracker {
  let tracker: Promise<ErrorTracker> | undefined
  const queued: Promise<unknown>[] = []
  return {
    capture(err, tags) {
      tracker ??= build()
      // a tracker that cannot be built must not take the function down: the error is still logged by the caller
      queued.push(tracker.then((t) => t.capture(err, tags)).catch(() => undefined))
    },
    async flush(timeoutMs) {
      if (!tracker) return true
      await Promise.all(queued.splice(0))
      try {
        return await (await tracker).flush(timeoutMs)
      } catch {
        return false
      }
    },
  }
}
