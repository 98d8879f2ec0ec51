/**
 * Whether a whole set of enrichment configuration files would start enrich,
 * checked before the set is stored (the control plane's uploads, disabling
 * and enabling). It runs enrich's own loader — every file against its schema,
 * an enrichment configured twice — then builds the steps as enrich does at
 * start, with services that are never called: JavaScript is compiled and its
 * top-level code run once under the per-event limits (an endless loop is
 * stopped after `SCRIPT_LIMITS.timeMs`), then its `process()` is tried on
 * sample events (`javascript-trial.ts`: refused when it does not finish on
 * one, or fails on every one), SQL placeholders are matched with
 * the inputs, API request templates with theirs, every parameter a module
 * reads is read. What building needs the network for is checked apart: each
 * asset (`uri` + `database`) must answer the shell's bounded probe; the steps
 * that read an asset's contents are built by enrich once it has downloaded them.
 * Every problem is returned, each naming its file.
 */
import type { Resolver } from '../../iglu/resolver'
import type { WebServices } from './http-get'
import { MODULES } from './index'
import type { LookupServices } from './lookups'
import type { BuildContext, EnrichmentModule } from './module'
import { javascriptScript } from './javascript'
import { tryScript } from './javascript-trial'
import { assetLocationProblem, assetsOf, buildEnrichments, readEnrichmentConfigs, type ConfigFile } from './registry'

export interface SetCheckOptions {
  readonly resolver: Resolver
  /**
   * Why the asset at `location` cannot be read, or undefined when it answered.
   * The shell bounds it in time and does not download the whole file.
   */
  probeAsset(location: string): Promise<string | undefined>
  readonly modules?: readonly EnrichmentModule[]
}

export type SetCheck =
  /** The files of the enabled enrichments and of the disabled ones. */
  | { readonly ok: true; readonly enabled: readonly string[]; readonly disabled: readonly string[] }
  | { readonly ok: false; readonly errors: readonly string[] }

const NOT_CALLED = 'not called while the configuration is checked'

const web: WebServices = { http: { get: async () => ({ ok: false, error: NOT_CALLED }) } }
const services: LookupServices = {
  http: { request: async () => ({ ok: false, error: NOT_CALLED }) },
  sql: () => ({
    query: async () => {
      throw new Error(NOT_CALLED)
    },
  }),
  now: () => Date.now(),
}

/** What the steps are built with while checking: enrich's context, with services that are never called. */
export const CHECK_CONTEXT: BuildContext = {
  assets: {
    path(location) {
      throw new Error(`${location} is not downloaded while the configuration is checked`)
    },
  },
  legacyOrder: false,
  web,
  services,
  // a script that does not compile is refused here, whatever enrich's feature flag says
  exitOnJsCompileError: true,
  eventSpecs: { source: { load: async () => [] }, now: () => Date.now() },
}

/** Checks the set of files enrich would read (bounded: each script by its time limit, each asset by the probe). */
export async function checkEnrichmentSet(files: readonly ConfigFile[], o: SetCheckOptions): Promise<SetCheck> {
  const modules = o.modules ?? MODULES
  const loaded = await readEnrichmentConfigs(files, o.resolver, modules)
  const errors = [...loaded.errors]
  const withAssets = new Set<string>()
  // one promise per asset, in order: the problem or undefined
  const assetProblems: Promise<string | undefined>[] = []
  for (const c of loaded.configs) {
    const assets = assetsOf([c], modules)
    if (assets.length > 0) withAssets.add(c.source)
    for (const a of assets) {
      const refused = assetLocationProblem(a.location)
      const cannot = (why: string) => `${c.source}: asset ${a.name} at ${a.location} cannot be read: ${why}`
      assetProblems.push(
        refused !== undefined
          ? Promise.resolve(`${c.source}: ${refused}`)
          : o.probeAsset(a.location).then(
              (why) => (why === undefined ? undefined : cannot(why)),
              (err: Error) => cannot(err.message),
            ),
      )
    }
  }
  const buildable = loaded.configs.filter((c) => !withAssets.has(c.source))
  const built = await buildEnrichments(buildable, CHECK_CONTEXT, modules)
  for (const p of await Promise.all(assetProblems)) if (p !== undefined) errors.push(p)
  if (!built.ok) errors.push(...built.errors)
  else {
    // each script tried on sample events (one step per configuration, in order)
    for (const [i, c] of buildable.entries()) {
      if (c.schema.name !== javascriptScript.name) continue
      const problem = await tryScript(built.enrichments[i]!, c.source)
      if (problem !== undefined) errors.push(problem)
    }
  }
  if (errors.length > 0) return { ok: false, errors }
  return { ok: true, enabled: loaded.configs.map((c) => c.source), disabled: loaded.skipped }
}
