/** The schema resolver of a function inside the deployment. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { defaultResolver } from '../runtime/default-resolver'
import type { Resolver } from '../core/iglu/resolver'
import { envVar } from '../infra/resources'
import { clients } from './clients'
import { DynamoSchemaStore } from './registry-store'
import { externalRepositories } from './external-registries'
import { followRegistry } from '../runtime/registry-changes'

/**
 * The resolver of a function inside the deployment: this deployment's registry
 * first (its schemas table, private schemas included), then the configured
 * repositories (see `defaultResolverConfig`) and the external registries
 * added in the control plane. It follows the registry's changes (see
 * `lib/runtime/registry-changes.ts`): a schema pushed to the registry is
 * seen from the next batch, whatever the cache TTL.
 */
export function deploymentResolver(env: NodeJS.ProcessEnv = process.env, ddb?: DynamoDBClient): Resolver {
  const table = env[envVar('table', 'schemas')]
  const store = table ? new DynamoSchemaStore(ddb ?? clients().ddb, table) : undefined
  const settings = env[envVar('table', 'settings')]
  const client = () => ddb ?? clients().ddb
  const resolver = defaultResolver({ env, store, loadRepositories: settings ? externalRepositories(client, settings) : undefined })
  return store ? followRegistry(resolver) : resolver
}

