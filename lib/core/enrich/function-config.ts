/**
 * The enrich function's configuration at run time: the document the deployment
 * resolved from the HOCON file (see `deploy.ts`), passed as JSON. Reading it
 * needs no HOCON parser, which keeps the parser out of the function bundle.
 */
import { validateConfig, type ConfigResult } from './config'

/** The environment variable naming a configuration file (HOCON). */
export const CONFIG_ENV = 'FLOE_ENRICH_CONFIG'
/** The parsed configuration document (JSON), set by the deployment for the function. */
export const CONFIG_JSON_ENV = 'FLOE_ENRICH_CONFIG_JSON'

/** Who accepted the licence at deploy time (`configuration`, `environment` or `none`), set for the control plane. */
export const LICENCE_SOURCE_ENV = 'FLOE_ENRICH_LICENCE'

/** Validates the document the deployment passed in `FLOE_ENRICH_CONFIG_JSON`. */
export function loadFunctionConfig(env: Readonly<Record<string, string | undefined>> = process.env, opts: { licenceRecorded?: boolean } = {}): ConfigResult {
  const json = env[CONFIG_JSON_ENV]
  if (!json) return { ok: false, errors: [`${CONFIG_JSON_ENV} is not set: the deployment sets it from ${CONFIG_ENV} (or the embedded configuration)`] }
  let doc: unknown
  try {
    doc = JSON.parse(json)
  } catch (err) {
    return { ok: false, errors: [`${CONFIG_JSON_ENV} is not valid JSON: ${(err as Error).message}`] }
  }
  return validateConfig(doc, { env, licenceRecorded: opts.licenceRecorded })
}
