/** The search function's dependencies inside the deployment: its database and this deployment's resolver. */
import { searchApi } from '../core/search/api'
import { ENRICH_VERSION } from '../core/enrich/version'
import type { HttpHandler } from '../http/types'
import { database } from './database'
import { deploymentResolver } from './resolver'
import { restartable } from '../runtime/restarts'
import { checkRegistryChanges } from '../runtime/registry-changes'
import { clients } from './clients'
import { searchApplicationName, searchTimeoutMs } from '../core/search/settings'
import { DEFAULT_WATCH_INTERVAL_MS, StoreWatch, storeVersion } from '../core/search/store-watch'
import { onSearchStoreWritten } from '../runtime/store-writes'

export function searchFromEnvironment(env: NodeJS.ProcessEnv = process.env): HttpHandler {
  // The resolver (its schema cache, the external registries) is built again after a restart.
  const resolver = restartable(['searchstore', 'registry'], () => deploymentResolver(env))
  const timeoutMs = searchTimeoutMs(env) // a bad setting stops the function with its rule
  const db = () => database('search', { application: searchApplicationName(timeoutMs) })
  // one watch of the store for every /micro/wait of this process; a loader of this process (locally) wakes it at once
  const storeWatch = new StoreWatch({ read: async () => storeVersion(await db()), intervalMs: DEFAULT_WATCH_INTERVAL_MS })
  onSearchStoreWritten(() => storeWatch.nudge())
  return searchApi({
    db,
    storeWatch,
    timeoutMs,
    version: ENRICH_VERSION,
    async lookupSchema(vendor, name, format, version) {
      // what was pushed to the registry before this request is seen (lib/runtime/registry-changes.ts)
      await checkRegistryChanges(() => clients().ddb)
      const r = await resolver.get().lookupSchema(`iglu:${vendor}/${name}/${format}/${version}`)
      return r.ok ? { ok: true, schema: r.value } : { ok: false, errors: { message: r.message, lookupHistory: r.failures } }
    },
  })
}
