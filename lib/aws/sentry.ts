/**
 * Error reporting to Sentry with Sentry's Node client: a client of its own,
 * not the global one, with no automatic instrumentation, so nothing in the
 * process is patched.
 */
import { defaultStackParser, makeNodeTransport, NodeClient, Scope } from '@sentry/node'
import type { ErrorTracker } from './error-tracker'

export interface SentryOptions {
  readonly dsn: string
  /** Tags on every event (`monitoring.sentry.tags`). */
  readonly tags?: Readonly<Record<string, string>>
  readonly release?: string
  /** The function or host name. */
  readonly serverName?: string
}

export function sentryTracker(o: SentryOptions): ErrorTracker {
  const client = new NodeClient({
    dsn: o.dsn,
    transport: makeNodeTransport,
    stackParser: defaultStackParser,
    integrations: [],
    release: o.release,
    serverName: o.serverName,
    sendClientReports: false,
    // nothing in the process is instrumented: no module hooks
    enableRuntimeChannelInjection: false,
  })
  client.init()
  const scope = new Scope()
  scope.setClient(client)
  if (o.tags) scope.setTags({ ...o.tags })
  let queued = 0
  return {
    capture(err, tags) {
      queued++
      const s = scope.clone()
      if (tags) s.setTags({ ...tags })
      client.captureException(err, { originalException: err }, s)
    },
    async flush(timeoutMs = 2000) {
      if (queued === 0) return true
      queued = 0
      return client.flush(timeoutMs)
    },
  }
}
