/**
 * A specification published, deprecated or deleted through the
 * tracking-design API is used by enrich's event specification enrichment
 * from its next batch, whatever its `refreshPeriodSeconds`. As for schema
 * pushes (`registry-changes.ts`): the API adds one to a change counter in
 * the settings table (pk `control-plane`, sk `spec-changes`) after the write
 * and before it answers, and applies the change in its own process at once
 * (locally enrich runs in a worker thread of the stack's process and gets
 * it as a notice ahead of its next batch); enrich reads the counter at the
 * start of each batch, at most every `SPEC_CHECK_MS`, and when it moved
 * reads the specifications again before the batch (waiting at most
 * `SPEC_RELOAD_WAIT_MS`; a slower read is applied when it answers). On AWS,
 * a batch that begins `SPEC_CHECK_MS` after the API answered is tagged with
 * the new specification.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { ChangeWatch } from '../core/iglu/changes'
import { envVar } from '../infra/resources'
import { bumpChangeCounter, readChangeCounter } from './change-counter'
import { announce, onNotice } from './notices'

/** The longest time a warm enrich runs on its copy of the specifications after a publish. */
export const SPEC_CHECK_MS = 1_000

/** The longest a batch waits for the counter and the specifications to be read again. */
export const SPEC_RELOAD_WAIT_MS = 5_000

const COUNTER = 'spec-changes'

/** What keeps a copy of the published specifications (the event specification enrichment). */
export interface SpecFollower {
  /** Reads the specifications again; resolves once the copy is replaced (or the read failed and was reported). */
  reload(): Promise<void>
}

const followers = new Set<WeakRef<SpecFollower>>()
const pending = new Set<Promise<void>>()
let watch: ChangeWatch | undefined

function reloadAll(): void {
  for (const ref of followers) {
    const f = ref.deref()
    if (f === undefined) {
      followers.delete(ref)
      continue
    }
    const p: Promise<void> = f.reload().catch(() => undefined).finally(() => pending.delete(p))
    pending.add(p)
  }
}

/** Makes `f` follow the published specifications (held weakly). */
export function followSpecs<T extends SpecFollower>(f: T): T {
  followers.add(new WeakRef(f))
  return f
}

function settingsTable(env: NodeJS.ProcessEnv): string | undefined {
  return env[envVar('table', 'settings')]
}

/**
 * Called by the tracking-design API after a write that can change the
 * published specifications, before it answers: adds one to the counter
 * (where the function has the settings table) and applies the change in this
 * process (and its worker threads) at once.
 */
export async function specsChanged(ddb: () => DynamoDBClient, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const table = settingsTable(env)
  const count = table ? await bumpChangeCounter(ddb(), table, COUNTER) : undefined
  announce({ kind: 'specs-changed', count })
}

onNotice("specs-changed", (n) => {
  if (n.count !== undefined) watch?.applied(n.count)
  reloadAll()
})

/**
 * Called by enrich at the start of a batch: reads the counter when the last
 * read began `SPEC_CHECK_MS` or more ago and, when it moved, reads the
 * specifications again; resolves once the reads under way are done, or after
 * `SPEC_RELOAD_WAIT_MS`. Without followers nothing is read.
 */
export async function checkSpecChanges(ddb: () => DynamoDBClient, env: NodeJS.ProcessEnv = process.env, now = Date.now()): Promise<void> {
  if (followers.size === 0) return
  const table = settingsTable(env)
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, SPEC_RELOAD_WAIT_MS)
  })
  const work = async () => {
    if (table) {
      watch ??= new ChangeWatch({ read: () => readChangeCounter(ddb(), table, COUNTER), everyMs: SPEC_CHECK_MS, onChange: reloadAll })
      await watch.check(now)
    }
    await Promise.all([...pending])
  }
  try {
    await Promise.race([work(), waited])
  } finally {
    clearTimeout(timer)
  }
}

/** For tests: forget the counter seen, the followers and the reads under way. */
export function resetSpecChanges(): void {
  watch = undefined
  followers.clear()
  pending.clear()
}
