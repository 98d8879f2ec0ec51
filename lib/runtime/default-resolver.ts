/**
 * The deployment's resolver: the core's default configuration with the
 * project's `schemas/` directory found where this code runs.
 */
import * as core from '../core/iglu/resolver-config'
import type { Resolver } from '../core/iglu/resolver'
import type { Repository } from '../core/iglu/repositories'
import type { ResolverConfig } from '../core/iglu/resolver-config'
import { schemasDir } from './schemas'

export type DefaultResolverOptions = Omit<core.DefaultResolverOptions, 'schemasDir'> & { readonly schemasDir?: string }

const withDir = (opts: DefaultResolverOptions): core.DefaultResolverOptions => ({ ...opts, schemasDir: opts.schemasDir ?? schemasDir() })

/** Floe's resolver configuration (see `core.defaultResolverConfig`), with the project's schemas. */
export function defaultResolverConfig(opts: DefaultResolverOptions = {}): { config: ResolverConfig; extra: Repository[]; lookupTimeoutMs?: number } {
  return core.defaultResolverConfig(withDir(opts))
}

/** Floe's resolver (see `core.defaultResolver`), with the project's schemas. */
export function defaultResolver(opts: DefaultResolverOptions = {}): Resolver {
  return core.defaultResolver(withDir(opts))
}

/** The Iglu Central snapshot shipped in the project's `schemas/iglu-central`. */
export function igluCentralSnapshot(env: NodeJS.ProcessEnv = process.env): string {
  return core.igluCentralSnapshot(schemasDir(), env)
}
