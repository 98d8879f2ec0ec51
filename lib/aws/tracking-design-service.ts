/**
 * The tracking-design API wired to DynamoDB from the function's environment
 * (see `lib/core/tracking-design/README.md` for the variables).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { HttpHandler } from '../http/types'
import { createTrackingDesignService } from '../core/tracking-design/service'
import { resolvingRegistry } from '../core/tracking-design/resolving-registry'
import { checkRegistryChanges, followRegistry } from '../runtime/registry-changes'
import { cachedRegistry, schemaCacheSeconds } from '../core/tracking-design/schema-cache'
import { cachedLists, listCacheSeconds } from '../core/tracking-design/list-cache'
import { announcingSpecChanges } from '../core/tracking-design/spec-changes'
import { specsChanged } from '../runtime/spec-changes'
import { defaultResolver } from '../runtime/default-resolver'
import type { ResourceNames } from '../infra/resources'
import { tableName } from '../runtime/resources'
import { clients } from './clients'
import { externalRepositories } from './external-registries'
import { restartable } from '../runtime/restarts'
import { DynamoSchemaStore } from './registry-store'
import { backfillSpecIndexKeys, DynamoAccountStore, DynamoCatalogStore, DynamoSpecStore } from './tracking-design-store'

/** The stores over the given physical table names. */
export function trackingDesignStores(ddb: DynamoDBClient, tables: Pick<ResourceNames['tables'], 'eventSpecs' | 'specHistory' | 'apiKeys' | 'settings' | 'schemas'>) {
  return {
    specs: new DynamoSpecStore(ddb, tables.eventSpecs, tables.specHistory),
    accounts: new DynamoAccountStore(ddb, tables.apiKeys, tables.settings),
    catalog: new DynamoCatalogStore(ddb, tables.settings),
    registry: new DynamoSchemaStore(ddb, tables.schemas),
  }
}

export function trackingDesignFromEnvironment(env: NodeJS.ProcessEnv = process.env): HttpHandler {
  // Built on first use, so a missing variable is reported by the request that needs it; built again after a restart of the registry.
  const service = restartable(['registry'], () => {
    const stores = trackingDesignStores(clients().ddb, {
      eventSpecs: tableName('eventSpecs'),
      specHistory: tableName('specHistory'),
      apiKeys: tableName('apiKeys'),
      settings: tableName('settings'),
      schemas: tableName('schemas'),
    })
    const resolving = resolvingRegistry(stores.registry, defaultResolver({ env, loadRepositories: externalRepositories(() => clients().ddb, tableName('settings')) }))
    // A schema written to the registry is seen by the next request (lib/runtime/registry-changes.ts).
    const registry = followRegistry(cachedRegistry(resolving, { ttlMs: schemaCacheSeconds(env) * 1000 }))
    // A publish is used by enrich from its next batch (lib/runtime/spec-changes.ts).
    const specs = cachedLists(announcingSpecChanges(stores.specs, () => specsChanged(() => clients().ddb, env)), { ttlMs: listCacheSeconds(env) * 1000 })
    const handler = createTrackingDesignService({ ...stores, specs, registry, jwtSecret: env.FLOE_JWT_SECRET?.trim() || undefined })
    // Records from before the list indexes get their keys once, before the first request is answered.
    let indexed: Promise<unknown> | undefined
    return async (req: Parameters<HttpHandler>[0]) => {
      indexed ??= backfillSpecIndexKeys(clients().ddb, tableName('eventSpecs'), tableName('settings')).catch((err) => {
        indexed = undefined
        throw err
      })
      await indexed
      await checkRegistryChanges(() => clients().ddb)
      return handler(req)
    }
  })
  return (req) => service.get()(req)
}
