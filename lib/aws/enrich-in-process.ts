/**
 * Enrich built in-process from the deployment's own configuration, registry
 * and enrichments, for verdicts only: its outputs are read by the caller and
 * written nowhere (recovery's preview, `/micro/validate`).
 */
import { LICENSE_MESSAGE } from '../core/enrich/config'
import { loadFunctionConfig } from '../core/enrich/function-config'
import { restartable, type Restartable } from '../runtime/restarts'
import { tableName } from '../runtime/resources'
import { clients } from './clients'
import { createRuntime, loadEnrichments, type EnrichKinesisRuntime } from './enrich-kinesis'
import { recordedLicence } from './licence'

/** Enrich cannot run with this deployment's configuration (the reasons, `; `-separated). */
export class EnrichUnavailable extends Error {
  override readonly name = 'EnrichUnavailable'
}

/** Enrich as the deployment configures it (the licence accepted on the control plane counts); throws `EnrichUnavailable`. */
export async function buildInProcessEnrich(): Promise<EnrichKinesisRuntime> {
  let c = loadFunctionConfig()
  if (!c.ok && c.errors.includes(LICENSE_MESSAGE) && (await recordedLicence(clients().ddb, tableName('settings')))) c = loadFunctionConfig(process.env, { licenceRecorded: true })
  if (!c.ok) throw new EnrichUnavailable(c.errors.join('; '))
  const rt = createRuntime(c.config, { log: () => undefined })
  await loadEnrichments(rt)
  return rt
}

/** An in-process enrich built on first use, again after a restart of enrich or the registry, and again after a failed build. */
export function inProcessEnrich(): Restartable<Promise<EnrichKinesisRuntime>> {
  const r = restartable(['enrich', 'registry'], () => {
    const p = buildInProcessEnrich()
    p.catch(() => r.drop())
    return p
  })
  return r
}
