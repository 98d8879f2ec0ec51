/**
 * A command-line process acting as one of the running local stack's
 * functions: the resource names, emulator endpoints and search store that
 * `floe start` gives its functions, set in this process's environment from
 * `endpoints.json`, plus the functions' own configuration (enrich's, from
 * `FLOE_ENRICH_CONFIG` as `floe start` reads it).
 */
import { LOCAL_ENDPOINTS_ENV, type LocalEndpoints } from '../aws/clients'
import { schemaForPrefix } from '../core/search/store'
import { functions } from '../infra/functions'
import { envVar, localNames, resourceEnvironment } from '../infra/resources'

export function attachToLocalStack(ep: LocalEndpoints & { readonly namePrefix?: string }): void {
  const prefix = ep.namePrefix ?? 'floe'
  Object.assign(process.env, resourceEnvironment(localNames(prefix)), {
    [LOCAL_ENDPOINTS_ENV]: JSON.stringify(ep),
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
  })
  if (ep.postgres) process.env[envVar('database', 'search')] = JSON.stringify({ kind: 'postgres', url: ep.postgres, schema: schemaForPrefix(prefix) })
  for (const decl of Object.values(functions) as { environment?: Record<string, string> }[]) {
    for (const [k, v] of Object.entries(decl.environment ?? {})) process.env[k] ??= v
  }
}
