import { randomUUID } from 'node:crypto'
import { DEFAULT_COLLECTOR_CONFIG, loadCollectorConfig, ROOT_REDIRECT_ENV, withRootRedirect, type CollectorConfig } from '../../lib/core/collector/config'
import { handleCollectorRequest, sinkFailureResponse, type CollectorRecord } from '../../lib/core/collector/service'
import { responseProblem } from '../../lib/http/headers'
import type { HttpHandler } from '../../lib/http/types'
import { onRestart } from '../../lib/runtime/restarts'

/** Environment variable holding the collector configuration as JSON (optional; defaults otherwise). */
export const COLLECTOR_CONFIG_ENV = 'FLOE_COLLECTOR_CONFIG'

/** Writes a request's records; resolves only when all of them are stored. */
export type RecordSink = (records: readonly CollectorRecord[], config: CollectorConfig) => Promise<void>

let cached: { source: string; config: CollectorConfig } | undefined
// A restart of the collector reads its configuration again.
onRestart((services) => {
  if (services.has('collector')) cached = undefined
})

/**
 * The configuration from `FLOE_COLLECTOR_CONFIG` (with the root redirect of
 * `FLOE_COLLECTOR_ROOT_REDIRECT` when it does not configure `rootResponse`),
 * validated once per distinct value.
 */
export function collectorConfigFromEnv(): CollectorConfig {
  const given = process.env[COLLECTOR_CONFIG_ENV]
  const root = process.env[ROOT_REDIRECT_ENV]
  const source = `${root ?? ''}\n${given ?? ''}`
  if (!cached || cached.source !== source) {
    const config = given || root ? loadCollectorConfig(withRootRedirect(given ? JSON.parse(given) : undefined, root)) : DEFAULT_COLLECTOR_CONFIG
    cached = { source, config }
  }
  return cached.config
}

/**
 * The collector as an HTTP handler: the pure core decides the answer and the
 * records; the answer is sent only after the sink stored every record, and a
 * failed write becomes a 503 the trackers retry. `clock` is the collector time
 * (epoch ms) of a request: its records' timestamp and its cookies' `Expires`.
 */
export function collectorHttpHandler(sink: RecordSink, config: () => CollectorConfig = collectorConfigFromEnv, clock: () => number = Date.now): HttpHandler {
  let sinkHealthy = true
  return async (req) => {
    const cfg = config()
    const { response, records } = handleCollectorRequest(req, cfg, clock(), randomUUID, { sinkHealthy })
    // Nothing may fail after the write: a response that cannot be sent is refused before it.
    const problem = responseProblem(response)
    if (problem !== undefined) return { statusCode: 400, headers: { 'content-type': 'text/plain; charset=UTF-8' }, body: `Bad Request: ${problem}` }
    if (records.length === 0) return response
    try {
      await sink(records, cfg)
      sinkHealthy = true
      return response
    } catch (err) {
      sinkHealthy = false
      console.error(JSON.stringify({ level: 'error', msg: 'collector write failed', path: req.path, records: records.length, error: String((err as Error)?.message ?? err) }))
      return sinkFailureResponse(req)
    }
  }
}
