/**
 * `/micro/validate/<collector path>`: what enrich makes of the events of one
 * request, answered at once and written nowhere. The request goes through the
 * collector's own core (`handleCollectorRequest`: paths, custom paths, cookies,
 * size limits, the CollectorPayload it would write) with the prefix taken off
 * its path; the payloads it would write to the raw stream are enriched
 * in-process by the `enrich` port (the stack's configuration, registry and
 * enrichments, outputs kept, nothing written), and the bad rows it would write
 * (a payload over the size limit) are answered as they are.
 *
 * Each event's outcome is `{valid: true, event}` (the event as `/micro/good`
 * shows it) or `{valid: false, badRow}` (the bad row as `/micro/bad` shows it,
 * the Snowplow bad row JSON). Failed events (`incomplete`) and pii events are
 * not answered: a failed event's bad row is.
 */
import type { HttpRequest, HttpResponse } from '../../http/types'
import { json } from '../../http/types'
import type { CollectorConfig } from '../collector/config'
import { handleCollectorRequest } from '../collector/service'
import type { RecordOutcome } from '../enrich/enrich'
import { goodDocument } from '../search/documents'
import { microEvent } from '../search/micro'

/** The prefix of the route; what follows it is the collector path. */
export const VALIDATE_PREFIX = '/micro/validate'

/** The largest answer (bytes of JSON): a Lambda response carries at most 6 MB. */
export const MAX_ANSWER_BYTES = 5_000_000

/** The time budget of one request (ms), under the function's timeout. */
export const VALIDATE_BUDGET_MS = 20_000

export type ValidateResult = { readonly valid: true; readonly event: Record<string, unknown> } | { readonly valid: false; readonly badRow: unknown }

/** Enrich cannot run in this stack (its configuration, its licence): a 503 with the reason. */
export class ValidateUnavailable extends Error {
  override readonly name = 'ValidateUnavailable'
}

/** The request's events were not enriched within the budget: a 504. */
export class ValidateTimeout extends Error {
  override readonly name = 'ValidateTimeout'
}

export interface ValidatePorts {
  readonly collectorConfig: () => CollectorConfig
  /** Enriches collector payloads (Thrift) as this stack's enrich does, writing nothing; rejects with `ValidateUnavailable` or `ValidateTimeout`. */
  readonly enrich: (payloads: readonly Uint8Array[]) => Promise<readonly RecordOutcome[]>
  /** The collector time of the request (epoch ms). */
  readonly now: () => number
  readonly uuid: () => string
}

const EXAMPLES = '/micro/validate/com.snowplowanalytics.snowplow/tp2 (POST), /micro/validate/i (GET), /micro/validate/{vendor}/{version}'

const message = (status: number, text: string): HttpResponse => json(status, { message: text }, { 'cache-control': 'no-store' })

/** Whether a collector path (after custom paths) is one it records events on: `/i`, `/ice.png`, `/{vendor}/{version}`. */
function eventPath(path: string): boolean {
  const segments = path.split('/').slice(1)
  if (segments.length === 1) return segments[0] === 'i' || segments[0] === 'ice.png'
  return segments.length === 2 && segments[0] !== '' && segments[1] !== ''
}

function bodyText(r: HttpResponse): string {
  if (r.body === undefined) return ''
  const t = typeof r.body === 'string' ? r.body : r.body.toString('utf8')
  return t.length > 200 ? `${t.slice(0, 200)}…` : t
}

/** The outcomes of one collector record, in the order its events came. */
function resultsOf(outcome: RecordOutcome): ValidateResult[] {
  const out: ValidateResult[] = []
  for (const o of outcome.outputs) {
    if (o.kind === 'good') {
      const d = goodDocument(o.tsv, false)
      out.push({ valid: true, event: microEvent(o.tsv, d.ok ? d.value.doc : {}) })
    } else if (o.kind === 'bad') out.push({ valid: false, badRow: JSON.parse(o.json) as unknown })
  }
  return out
}

/** Answers a `/micro/validate/…` request. */
export async function validateRequest(req: HttpRequest, ports: ValidatePorts): Promise<HttpResponse> {
  if (req.path !== VALIDATE_PREFIX && !req.path.startsWith(`${VALIDATE_PREFIX}/`)) return message(404, `not a validation path: ${EXAMPLES}`)
  const path = req.path.slice(VALIDATE_PREFIX.length)
  if (path === '' || path === '/') return message(404, `/micro/validate takes a collector path after it, as a tracker sends to the collector: ${EXAMPLES}`)
  const { response, records } = handleCollectorRequest({ ...req, path }, ports.collectorConfig(), ports.now(), ports.uuid)
  if (records.length === 0) {
    if (response.statusCode >= 400) return message(response.statusCode, `${VALIDATE_PREFIX}: the collector answers ${response.statusCode} to ${req.method} ${path}${bodyText(response) ? ` (${bodyText(response)})` : ''}: no event to validate`)
    // a request the collector takes and records nothing of (a do-not-track cookie, a cookie bounce)
    if (req.method !== 'OPTIONS' && eventPath(path)) return json(200, { results: [] }, { 'cache-control': 'no-store' })
    return message(404, `${req.method} ${path} is not a request the collector records events of: ${EXAMPLES}`)
  }
  const raw = records.filter((r) => r.stream === 'raw').map((r) => r.data)
  let outcomes: readonly RecordOutcome[]
  try {
    outcomes = raw.length > 0 ? await ports.enrich(raw) : []
  } catch (err) {
    if (err instanceof ValidateUnavailable) return message(503, err.message)
    if (err instanceof ValidateTimeout) return message(504, err.message)
    throw err
  }
  const results: ValidateResult[] = []
  let next = 0
  for (const r of records) {
    if (r.stream === 'bad') results.push({ valid: false, badRow: JSON.parse(r.data.toString('utf8')) as unknown })
    else results.push(...resultsOf(outcomes[next++]!))
  }
  const body = JSON.stringify({ results })
  if (Buffer.byteLength(body) > MAX_ANSWER_BYTES) {
    return message(413, `the answer for the ${results.length} events of this request is over ${MAX_ANSWER_BYTES} bytes: send fewer events per request`)
  }
  return { statusCode: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body }
}
