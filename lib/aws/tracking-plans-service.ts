/**
 * The tracking plans' API (see `lib/core/tracking-plans/api.ts`) wired to the
 * deployment: the tracking-design tables and registry (read), the enrichment
 * files of the assets bucket (whether enrich tags events) and the search store.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { S3Client } from '@aws-sdk/client-s3'
import { eventSpecDefaultOn, eventSpecState } from '../core/enrich/enrichments/event-spec-default'
import { trackingPlansApi } from '../core/tracking-plans/api'
import { resolvingRegistry } from '../core/tracking-design/resolving-registry'
import { cachedRegistry, schemaCacheSeconds } from '../core/tracking-design/schema-cache'
import type { HttpHandler } from '../http/types'
import { enrichmentFiles } from '../infra/enrichments'
import { envVar } from '../infra/resources'
import { database } from './database'
import { defaultResolver } from '../runtime/default-resolver'
import { restartable } from '../runtime/restarts'
import { checkRegistryChanges, followRegistry } from '../runtime/registry-changes'
import { bucketName, tableName } from '../runtime/resources'
import { configsFromBucket } from './enrichments'
import { externalRepositories } from './external-registries'
import { trackingDesignStores } from './tracking-design-service'

export function trackingPlansFromEnvironment(env: NodeJS.ProcessEnv, clients: () => { ddb: DynamoDBClient; s3: S3Client }): HttpHandler {
  const hasSearchStore = env[envVar('database', 'search')] !== undefined
  const service = restartable(['registry'], () => {
    const { ddb, s3 } = clients()
    const stores = trackingDesignStores(ddb, {
      eventSpecs: tableName('eventSpecs'),
      specHistory: tableName('specHistory'),
      apiKeys: tableName('apiKeys'),
      settings: tableName('settings'),
      schemas: tableName('schemas'),
    })
    const resolving = resolvingRegistry(stores.registry, defaultResolver({ env, loadRepositories: externalRepositories(() => ddb, tableName('settings')) }))
    return trackingPlansApi({
      specs: stores.specs,
      catalog: stores.catalog,
      registry: followRegistry(cachedRegistry(resolving, { ttlMs: schemaCacheSeconds(env) * 1000 })),
      listOrgs: () => stores.accounts.listOrgs(),
      ...(hasSearchStore ? { search: () => database('search') } : {}),
      async enrichment() {
        let defaultOn: boolean
        try {
          defaultOn = eventSpecDefaultOn(env)
        } catch (err) {
          return { on: false, reason: `enrich cannot start: ${(err as Error).message}` }
        }
        return eventSpecState(await configsFromBucket(s3, bucketName(enrichmentFiles.bucket)), defaultOn)
      },
      now: () => Date.now(),
    })
  })
  return async (req) => {
    const handler = service.get()
    // A schema written to the registry is seen by this request (lib/runtime/registry-changes.ts).
    await checkRegistryChanges(() => clients().ddb)
    return handler(req)
  }
}
