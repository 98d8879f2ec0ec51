/**
 * The API request enrichment's part of `npm run bench -- enrich`: an API
 * served by a child process (so its work is not counted as enrich's CPU
 * time), and the enrichment configured against it with a warm cache (one
 * question per visitor address, all answered before the timed passes) and
 * with no cache (every event asks, `concurrency.enrich` events in flight).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import type { Enricher } from '../../lib/core/enrich/enrich'
import type { Enrichment } from '../../lib/core/enrich/steps'
import type { Resolver } from '../../lib/core/iglu/resolver'
import { lookupServices, type RuntimeLookupServices } from '../../lib/runtime/lookup-services'
import { buildSteps } from './enrichments'

const SERVER = `
const http = require('node:http')
const s = http.createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    const n = req.url.length
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ record: { latitude: (n % 90) + 0.5, longitude: -(n % 180) + 0.25 }, source: 'bench' }))
  })
})
s.keepAliveTimeout = 60000
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'))
`

export interface BenchApi {
  readonly url: string
  stop(): void
}

/** Starts the API in a child process. */
export async function startBenchApi(): Promise<BenchApi> {
  const child: ChildProcess = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] })
  const [line] = (await once(child.stdout!, 'data')) as [Buffer]
  return { url: `http://127.0.0.1:${line.toString().trim()}`, stop: () => child.kill() }
}

const GEO = 'iglu:com.snowplowanalytics.snowplow/geolocation_context/jsonschema/1-1-0'

/** An API request enrichment asking `uri` with `input` (an atomic field), built as at start. */
export async function apiRequestStep(resolver: Resolver, uri: string, input: string, cache: { size: number; ttl: number }, services: RuntimeLookupServices): Promise<Enrichment> {
  const doc = {
    schema: 'iglu:com.snowplowanalytics.snowplow.enrichments/api_request_enrichment_config/jsonschema/1-0-2',
    data: {
      vendor: 'com.snowplowanalytics.snowplow.enrichments',
      name: 'api_request_enrichment_config',
      enabled: true,
      parameters: {
        inputs: [{ key: 'k', pojo: { field: input } }, { key: 'app', pojo: { field: 'app_id' } }],
        api: { http: { method: 'GET', uri, timeout: 5000, authentication: {} } },
        outputs: [{ schema: GEO, json: { jsonPath: '$.record' } }],
        cache,
      },
    },
  }
  return (await buildSteps([{ source: 'api_request_enrichment_config.json', text: JSON.stringify(doc) }], resolver, { services }))[0]!
}

/** The step with the time from its start to its answer recorded (ms) for every event. */
export function timedStep(e: Enrichment, ms: number[]): Enrichment {
  return {
    id: e.id,
    order: e.order,
    run(ev, input) {
      const t0 = performance.now()
      const r = e.run(ev, input)
      if (r instanceof Promise) {
        return r.then((x) => {
          ms.push(performance.now() - t0)
          return x
        })
      }
      ms.push(performance.now() - t0)
      return r
    },
  }
}

export { lookupServices }

/** The 99th percentile of a list of numbers. */
export function p99(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? 0
}

/** Enriches `records` with `concurrency` in flight; events per wall-clock second. */
export async function wallRate(e: Enricher, records: readonly Uint8Array[], concurrency: number): Promise<number> {
  const batch = { etlTimestamp: Date.now(), newEventId: () => '00000000-0000-4000-8000-000000000000' }
  let next = 0
  let good = 0
  const t0 = performance.now()
  const worker = async () => {
    for (;;) {
      const i = next++
      if (i >= records.length) return
      const o = await e.enrichRecord(records[i]!, batch)
      for (const out of o.outputs) if (out.kind === 'good') good++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  if (good === 0) throw new Error('no good event')
  return records.length / ((performance.now() - t0) / 1000)
}
