/**
 * `/micro/validate` wired to the deployment: the collector's configuration,
 * and enrich built in-process from the deployment's configuration, registry
 * and enrichments (see `enrich-in-process.ts`). Nothing is written: no
 * stream, no store, no metrics of enriched events.
 */
import { randomUUID } from 'node:crypto'
import type { CollectorConfig } from '../core/collector/config'
import { enrichBatch } from '../core/enrich/runner'
import { VALIDATE_BUDGET_MS, ValidateTimeout, ValidateUnavailable, validateRequest } from '../core/validate/micro-validate'
import type { HttpHandler } from '../http/types'
import { checkRegistryChanges } from '../runtime/registry-changes'
import { clients } from './clients'
import { EnrichUnavailable, inProcessEnrich } from './enrich-in-process'

export interface ValidateOptions {
  readonly collectorConfig: () => CollectorConfig
  /** Default `VALIDATE_BUDGET_MS`. */
  readonly budgetMs?: number
  /** Builds enrich as the function starts (default true). */
  readonly warm?: boolean
}

export function validateFromEnvironment(opts: ValidateOptions): HttpHandler {
  const enrich = inProcessEnrich()
  // built now, not at the first request (a tracker times a request out after 5 s); a failed build is tried again by the request
  if (opts.warm !== false) void enrich.get().catch(() => undefined)
  const budgetMs = opts.budgetMs ?? VALIDATE_BUDGET_MS
  return (req) =>
    validateRequest(req, {
      collectorConfig: opts.collectorConfig,
      now: Date.now,
      uuid: randomUUID,
      async enrich(payloads) {
        let timer: NodeJS.Timeout | undefined
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new ValidateTimeout(`the events of this request were not enriched within ${budgetMs} ms (enrichments that call out: API, SQL)`)), budgetMs)
        })
        try {
          const work = (async () => {
            let rt
            try {
              rt = await enrich.get()
            } catch (err) {
              if (err instanceof EnrichUnavailable) throw new ValidateUnavailable(`enrich cannot run in this stack, so events cannot be validated: ${err.message}`)
              throw err
            }
            // the registry as enrich's next batch sees it: schemas pushed (or written under FLOE_IGLU_DIRS) before this request
            await checkRegistryChanges(() => clients().ddb)
            return enrichBatch(rt.enricher, payloads, { concurrency: rt.config.concurrency.enrich })
          })()
          return await Promise.race([work, timeout])
        } finally {
          clearTimeout(timer)
        }
      },
    })
}
