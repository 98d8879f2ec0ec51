/**
 * `GET /metrics`: the report as JSON (default) or in Prometheus' text format
 * (`Accept: text/plain`, or `?format=prometheus`); `?format=json` forces
 * JSON, and any other `format` is a 400.
 */
import type { HttpRequest, HttpResponse } from '../../http/types'
import type { MetricsReport } from './report'
import { PROMETHEUS_CONTENT_TYPE, toPrometheus } from './prometheus'

export type MetricsFormat = 'json' | 'prometheus'
export const FORMATS: readonly MetricsFormat[] = ['json', 'prometheus']

/** How much the `Accept` header wants a media type (0 to 1): the most specific matching range wins. */
function quality(accept: string, type: string): number {
  const [main] = type.split('/')
  let best = -1
  let q = 0
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim())
    if (!range) continue
    const specificity = range === type ? 2 : range === `${main}/*` ? 1 : range === '*/*' ? 0 : -1
    if (specificity < 0 || specificity < best) continue
    const qp = params.find((p) => p.startsWith('q='))
    const value = qp ? Number(qp.slice(2)) : 1
    if (specificity > best) {
      best = specificity
      q = Number.isFinite(value) ? value : 0
    }
  }
  return q
}

/**
 * The format asked for: `format` when given, else by `Accept` (text/plain
 * preferred over JSON, as Prometheus' scraper sends it); JSON otherwise.
 */
export function chooseFormat(query: Readonly<Record<string, string>>, accept: string | undefined): { ok: true; format: MetricsFormat } | { ok: false; message: string } {
  const asked = query.format
  if (asked !== undefined) {
    const f = asked.trim().toLowerCase()
    if ((FORMATS as readonly string[]).includes(f)) return { ok: true, format: f as MetricsFormat }
    return { ok: false, message: `unknown format '${asked}': use format=json or format=prometheus (or Accept: text/plain for Prometheus)` }
  }
  if (!accept || !accept.trim()) return { ok: true, format: 'json' }
  const text = quality(accept, 'text/plain')
  const json = quality(accept, 'application/json')
  return { ok: true, format: text > json ? 'prometheus' : 'json' }
}

/** Answers a metrics request; `collect` runs only for a valid request. */
export async function answerMetrics(req: HttpRequest, collect: () => Promise<MetricsReport> | MetricsReport): Promise<HttpResponse> {
  const chosen = chooseFormat(req.query, req.headers.accept)
  const headers = { 'cache-control': 'no-store', vary: 'Accept' }
  if (!chosen.ok) return { statusCode: 400, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ message: chosen.message }) }
  const report = await collect()
  if (chosen.format === 'prometheus') return { statusCode: 200, headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, ...headers }, body: toPrometheus(report) }
  return { statusCode: 200, headers: { 'content-type': 'application/json', ...headers }, body: `${JSON.stringify(report, null, 2)}\n` }
}
