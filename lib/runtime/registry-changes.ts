/**
 * A schema written to this deployment's registry is seen by every resolver
 * of the deployment from its next batch, whatever the cache TTL. The
 * registry adds one to a change counter in the settings table (pk
 * `control-plane`, sk `registry-changes`) after each write (create, update,
 * delete); a process with resolvers reads it before their lookups (enrich
 * at the start of a batch), at most every `REGISTRY_CHECK_MS`, and when it moved, each
 * resolver forgets what the registry answered (hits and "not found"s; see
 * `Resolver.repositoryChanged`). What other repositories answered keeps the
 * cache TTL.
 *
 * The process that wrote applies the change at once (`registryChanged`):
 * locally every function runs in the stack's process, enrich in a worker
 * thread of it that gets the change as a notice (`notices.ts`) ahead of its
 * next batch, so the registry's answer means enrich's next batch sees the
 * schema. On AWS, a batch that
 * begins `REGISTRY_CHECK_MS` after the registry answered sees it.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { ChangeWatch } from '../core/iglu/changes'
import { OWN_REGISTRY } from '../core/iglu/resolver-config'
import { envVar } from '../infra/resources'
import { bumpChangeCounter, readChangeCounter } from './change-counter'
import { announce, onNotice } from './notices'

/** The longest time a warm process runs on a cached answer of the registry after a write to it. */
export const REGISTRY_CHECK_MS = 1_000

/** The longest a batch waits for a read of the counter (a slow read is applied when it answers; the batch goes on). */
export const REGISTRY_READ_WAIT_MS = 1_000

const COUNTER = 'registry-changes'

/** What follows the registry: a resolver (`Resolver.repositoryChanged`), a cache of schemas. */
export interface RegistryFollower {
  /** Absent: nothing to forget. */
  repositoryChanged?(name: string): void
}

const followers = new Set<WeakRef<RegistryFollower>>()
let watch: ChangeWatch | undefined

function forgetRegistry(): void {
  for (const ref of followers) {
    const f = ref.deref()
    if (f === undefined) followers.delete(ref)
    else f.repositoryChanged?.(OWN_REGISTRY)
  }
}

/** Makes `resolver` follow this deployment's registry (held weakly: a resolver built again replaces it). */
export function followRegistry<T extends RegistryFollower>(resolver: T): T {
  followers.add(new WeakRef(resolver))
  return resolver
}

function settingsTable(env: NodeJS.ProcessEnv): string | undefined {
  return env[envVar('table', 'settings')]
}

/** The registry's change counter (0 before the first change). */
export function readRegistryChanges(ddb: DynamoDBClient, table: string): Promise<number> {
  return readChangeCounter(ddb, table, COUNTER)
}

/** Adds one to the registry's change counter; answers its new value. */
export function bumpRegistryChanges(ddb: DynamoDBClient, table: string): Promise<number> {
  return bumpChangeCounter(ddb, table, COUNTER)
}

/**
 * Called by the registry after a schema was written or deleted, before it
 * answers: adds one to the change counter (where the function has the
 * settings table) and applies the change in this process at once.
 */
export async function registryChanged(ddb: () => DynamoDBClient, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const table = settingsTable(env)
  const count = table ? await bumpRegistryChanges(ddb(), table) : undefined
  announce({ kind: 'registry-changed', count })
}

// Here, and in the threads the notice is sent to: the resolvers forget the registry's answers.
onNotice('registry-changed', (n) => {
  if (n.count !== undefined) watch?.applied(n.count)
  forgetRegistry()
})

/**
 * Called at the start of a batch or request by a process with resolvers:
 * when the last read of the counter began `REGISTRY_CHECK_MS` or more ago,
 * reads it, and when it moved, the resolvers forget what the registry
 * answered. Resolves once that is done, or after `REGISTRY_READ_WAIT_MS`
 * (a failed read changes nothing; a later check reads again). Without
 * resolvers, or without the settings table, nothing is read.
 */
export async function checkRegistryChanges(ddb: () => DynamoDBClient, env: NodeJS.ProcessEnv = process.env, now = Date.now()): Promise<void> {
  const table = settingsTable(env)
  if (!table || followers.size === 0) return
  watch ??= new ChangeWatch({ read: () => readRegistryChanges(ddb(), table), everyMs: REGISTRY_CHECK_MS, onChange: forgetRegistry })
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, REGISTRY_READ_WAIT_MS)
  })
  try {
    await Promise.race([watch.check(now), waited])
  } finally {
    clearTimeout(timer)
  }
}

/** For tests: forget the counter seen and the followers. */
export function resetRegistryChanges(): void {
  watch = undefined
  followers.clear()
}
