/**
 * Enriching a batch of stream records with a bounded number in flight, as both
 * the Lambda and the file-based variant do. A record whose processing throws
 * (a bug, not bad input) becomes a `generic_error` bad row: it is never retried
 * forever.
 */
import { randomUUID } from 'node:crypto'
import type { BatchContext, Enricher, RecordOutcome } from './enrich'
import { stringify } from './json'
import type { Metrics } from './metrics'
import { instant } from './time'

export const GENERIC_ERROR_SCHEMA = 'iglu:com.snowplowanalytics.snowplow.badrows/generic_error/jsonschema/1-0-0'

export interface BatchOptions {
  /** Records enriched at the same time (`concurrency.enrich`). */
  readonly concurrency: number
  /** Processing time of the batch (epoch ms); default now. */
  readonly now?: number
  readonly newEventId?: () => string
}

/**
 * Runs `fn` over `items` with at most `limit` in flight; results in input
 * order. Records whose schemas are cached are enriched without a pause, so
 * it lets the event loop run (a `setImmediate` turn) once `YIELD_AFTER_MS` of
 * work has passed without one: where enrich shares its process (the local
 * stack's gateway), requests are not held for a whole batch.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  let turn = performance.now()
  const worker = async () => {
    for (;;) {
      const i = next++
      if (i >= items.length) return
      results[i] = await fn(items[i]!, i)
      if (performance.now() - turn >= YIELD_AFTER_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve))
        turn = performance.now()
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return results
}

const YIELD_AFTER_MS = 20

/** Enriches every record; one outcome per record, in order. */
export async function enrichBatch(enricher: Enricher, records: readonly Uint8Array[], opts: BatchOptions): Promise<RecordOutcome[]> {
  const batch: BatchContext = { etlTimestamp: opts.now ?? Date.now(), newEventId: opts.newEventId ?? randomUUID }
  return mapLimit(records, opts.concurrency, async (record) => {
    try {
      return await enricher.enrichRecord(record, batch)
    } catch (err) {
      const p = enricher.settings.processor
      const json = stringify({
        schema: GENERIC_ERROR_SCHEMA,
        data: {
          processor: p,
          failure: { timestamp: instant(batch.etlTimestamp), errors: [String((err as Error)?.stack ?? err)] },
          payload: Buffer.from(record).toString('base64'),
        },
      })
      return { outputs: [{ kind: 'bad', type: 'generic_error', json }], payloads: 1, dropped: 0, invalid: [], collectorTimestamp: null } satisfies RecordOutcome
    }
  })
}

/** Counts a record's outcome (call once its outputs are written). */
export function countOutcome(metrics: Metrics, o: RecordOutcome): void {
  metrics.add('raw', o.payloads)
  if (o.dropped) metrics.add('dropped', o.dropped)
  if (o.invalid.length) metrics.add('invalid_enriched', o.invalid.length)
  for (const out of o.outputs) metrics.add(out.kind)
}

/** The `InvalidEnriched` debug log lines of a record (JSON, one per invalid event). */
export function invalidLogLines(o: RecordOutcome): string[] {
  return o.invalid.map((i) => JSON.stringify({ level: 'DEBUG', logger: 'InvalidEnriched', message: `Enriched event not valid against the atomic schema: ${i.reasons.join('; ')}`, event: i.tsv }))
}
