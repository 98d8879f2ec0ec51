/**
 * Restarts without containers. The control plane "restarts" a service by
 * adding one to the service's generation in the settings table
 * (pk `control-plane`, sk `restarts`, one number attribute per service). Every
 * function that serves a service keeps what a restart must drop (caches,
 * parsed configuration) in `restartable` values, and checks the generations
 * at the start of each invocation, reading them at most every
 * `RESTART_CHECK_MS`: a warm instance runs on fresh state at most that long
 * after the control plane answered.
 *
 * Locally every function runs in the control plane's process, so the control
 * plane also applies the new generations here at once (`restartHere`): its
 * answer means the restart is done. Enrich runs there in a worker thread: the
 * restart reaches it as a notice (`notices.ts`), before its next batch.
 */
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { ServiceName } from '../infra/services'
import { envVar } from '../infra/resources'
import { announce, onNotice } from './notices'

/** How long a warm function may run on the state of before a restart. */
export const RESTART_CHECK_MS = 5_000

export type Generations = Readonly<Partial<Record<ServiceName, number>>>

const KEY = { pk: { S: 'control-plane' }, sk: { S: 'restarts' } }
const attr = (s: ServiceName) => `gen_${s}`

interface Memo {
  readonly services: readonly ServiceName[]
  drop(): void
}

const memos = new Set<Memo>()
const listeners = new Set<(services: ReadonlySet<ServiceName>) => void>()
let known: Generations | undefined
let lastCheck = 0
let inflight: Promise<void> | undefined

/** A value built on first use and built again after a restart of any of `services`. */
export interface Restartable<T> {
  get(): T
  /** Drops the value now (the next `get` builds it again). */
  drop(): void
}

export function restartable<T>(services: readonly ServiceName[], build: () => T): Restartable<T> {
  let value: { v: T } | undefined
  const memo: Restartable<T> & Memo = {
    services,
    get() {
      value ??= { v: build() }
      return value.v
    },
    drop() {
      value = undefined
    },
  }
  memos.add(memo)
  return memo
}

/** Calls `f` with the services restarted, whenever some are (for state that is not a `restartable`). */
export function onRestart(f: (services: ReadonlySet<ServiceName>) => void): () => void {
  listeners.add(f)
  return () => listeners.delete(f)
}

/** Drops the state of the services whose generation differs from the one last seen. */
export function applyGenerations(next: Generations): ReadonlySet<ServiceName> {
  const previous = known
  known = { ...previous, ...next }
  // The first generations an instance sees are its starting point: it has just started.
  if (previous === undefined) return new Set()
  const changed = new Set<ServiceName>()
  for (const [s, g] of Object.entries(next) as [ServiceName, number][]) if ((previous[s] ?? 0) !== g) changed.add(s)
  drop(changed)
  return changed
}

/**
 * The restart of `services` in this process, with the generations the
 * control plane just wrote (locally, every function runs in its process),
 * and in its other threads that run functions.
 */
export function restartHere(services: Iterable<ServiceName>, next: Generations): void {
  announce({ kind: 'restart', services: [...services], generations: next })
}

onNotice('restart', (n) => {
  known = { ...known, ...n.generations }
  drop(new Set(n.services))
})

function drop(services: ReadonlySet<ServiceName>): void {
  if (services.size === 0) return
  for (const m of memos) if (m.services.some((s) => services.has(s))) m.drop()
  for (const l of listeners) l(services)
}

function settingsTable(env: NodeJS.ProcessEnv): string | undefined {
  return env[envVar('table', 'settings')]
}

function decode(item: Record<string, { N?: string }> | undefined): Generations {
  const g: Partial<Record<ServiceName, number>> = {}
  for (const [k, v] of Object.entries(item ?? {})) if (k.startsWith('gen_') && v.N !== undefined) g[k.slice(4) as ServiceName] = Number(v.N)
  return g
}

/** The deployment's restart generations. */
export async function readGenerations(ddb: DynamoDBClient, table: string): Promise<Generations> {
  const res = await ddb.send(new GetItemCommand({ TableName: table, Key: KEY, ConsistentRead: true }))
  return decode(res.Item as Record<string, { N?: string }> | undefined)
}

/** Adds one to the generation of each service; answers the new generations. */
export async function bumpGenerations(ddb: DynamoDBClient, table: string, services: readonly ServiceName[]): Promise<Generations> {
  const names: Record<string, string> = {}
  const adds = services.map((s, i) => {
    names[`#g${i}`] = attr(s)
    return `#g${i} :one`
  })
  const res = await ddb.send(
    new UpdateItemCommand({
      TableName: table,
      Key: KEY,
      UpdateExpression: `ADD ${adds.join(', ')} SET updatedAt = :now`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':one': { N: '1' }, ':now': { S: new Date().toISOString() } },
      ReturnValues: 'ALL_NEW',
    }),
  )
  return decode(res.Attributes as Record<string, { N?: string }> | undefined)
}

/**
 * Called at the start of an invocation: when the last read of the generations
 * is older than `RESTART_CHECK_MS`, reads them in the background (the
 * invocation does not wait for it) and drops what a restart dropped. A
 * function without the settings table, or a failed read, changes nothing
 * (a later invocation tries again). Answers the read, for tests.
 */
export function checkRestarts(ddb: () => DynamoDBClient, env: NodeJS.ProcessEnv = process.env, now = Date.now()): Promise<void> {
  const table = settingsTable(env)
  if (!table || now - lastCheck < RESTART_CHECK_MS) return inflight ?? Promise.resolve()
  lastCheck = now
  inflight ??= readGenerations(ddb(), table)
    .then((g) => void applyGenerations(g))
    .catch(() => {})
    .finally(() => {
      inflight = undefined
    })
  return inflight
}

/** For tests: forget the generations seen. */
export function resetRestartState(): void {
  known = undefined
  lastCheck = 0
}
