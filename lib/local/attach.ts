/**
 * A command-line process acting as one of the running local stack's
 * functions: the resource names, emulator endpoints and search store that
 * `floe start` gives its functions, set in this process's environment from
 * `endpoints.json`, plus the functions' own configuration: the one `floe
 * start` wrote there (its `environment`: enrich's configuration with the
 * licence answer, the resolver settings), else as this process's own
 * environment gives it (`FLOE_ENRICH_CONFIG`, …).
 */
import { LOCAL_ENDPOINTS_ENV, type LocalEndpoints } from '../aws/clients'
import { schemaForPrefix } from '../core/search/store'
import { functions } from '../infra/functions'
import { envVar, localNames, resourceEnvironment } from '../infra/resources'

export function attachToLocalStack(all: LocalEndpoints & { readonly namePrefix?: string; readonly environment?: Readonly<Record<string, string>> }): void {
  const { environment, ...ep } = all
  const prefix = ep.namePrefix ?? 'floe'
  // The functions' configuration as the running stack set it (its licence answer included), not as this shell would:
  // a command started in another terminal, without the stack's variables, acts as the stack's own functions do.
  if (environment) Object.assign(process.env, environment)
  Object.assign(process.env, resourceEnvironment(localNames(prefix)), {
    [LOCAL_ENDPOINTS_ENV]: JSON.stringify(ep),
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
  })
  if (ep.postgres) process.env[envVar('database', 'search')] = JSON.stringify({ kind: 'postgres', url: ep.postgres, schema: schemaForPrefix(prefix) })
  for (const decl of Object.values(functions) as { environment?: Record<string, string> }[]) {
    for (const [k, v] of Object.entries(decl.environment ?? {})) process.env[k] ??= v
  }
}
