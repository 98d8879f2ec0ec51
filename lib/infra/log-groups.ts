/**
 * The names of a deployment's log groups, declared once for the CDK app
 * (`./function.ts`, `./stacks.ts`) and for `floe logs --stack`
 * (`lib/cli/cloud-logs.ts`). No CDK import, so the CLI loads it cheaply.
 */
import { kebabName } from '../core/metrics/services'

/** A function's log group: `/floe/<stack name>/<function key in kebab case>`, e.g. `/floe/FloeApp/search-loader`. */
export function functionLogGroupName(stackName: string, key: string): string {
  return `/floe/${stackName}/${kebabName(key)}`
}

/** The key of the HTTP API's access log (`/floe/<stack name>/api-access`). */
export const API_ACCESS_LOG = 'apiAccess'
