/**
 * The registry service wired to DynamoDB and S3 from the function's
 * environment (see `lib/core/iglu/README.md` for the variables).
 */
import type { HttpHandler } from '../http/types'
import { createRegistryService } from '../core/iglu/service'
import { bucketName, tableName } from '../runtime/resources'
import { clients } from './clients'
import { restartable } from '../runtime/restarts'
import { registryChanged } from '../runtime/registry-changes'
import { DynamoKeyStore, DynamoSchemaStore, S3Publisher } from './registry-store'

const truthy = (v: string | undefined) => /^(1|true|yes|on)$/i.test(v?.trim() ?? '')

export function registryFromEnvironment(env: NodeJS.ProcessEnv = process.env): HttpHandler {
  // Built on first use, so a missing variable is reported by the request that needs it; built again after a restart.
  const service = restartable(['registry'], () => {
    const { ddb, s3 } = clients()
    const keys = new DynamoKeyStore(ddb, tableName('apiKeys'), tableName('settings'))
    const superApiKey = env.FLOE_SUPER_API_KEY?.trim() || undefined
    return createRegistryService({
      schemas: new DynamoSchemaStore(ddb, tableName('schemas')),
      keys,
      superKeys: keys,
      publisher: new S3Publisher(s3, bucketName('assets'), env.FLOE_REGISTRY_EXPORT_PREFIX ?? ''),
      superApiKey,
      patchesAllowed: truthy(env.FLOE_REGISTRY_PATCHES_ALLOWED),
      // every resolver of the deployment forgets what the registry answered (see lib/runtime/registry-changes.ts)
      schemasChanged: () => registryChanged(() => ddb, env),
      ...(env.FLOE_REGISTRY_MAX_PAYLOAD ? { maxPayloadSize: Number(env.FLOE_REGISTRY_MAX_PAYLOAD) } : {}),
    })
  })
  return (req) => service.get()(req)
}
