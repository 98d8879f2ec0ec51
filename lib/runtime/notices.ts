/**
 * Notices that must reach every thread that runs functions in this process.
 * Locally the control plane runs in the gateway's thread while enrich runs
 * in a worker thread of its own (`lib/local/function-worker.ts`): what the
 * control plane applies "here, at once" (a restart, a change to the
 * deployment's registry) is handled in this thread by the handlers
 * registered with `onNotice`, and sent to the other threads, whose copy of
 * this module delivers it to their own handlers. On AWS each function is its
 * own process and nothing is sent: the notices are handled where they are
 * announced only.
 */
import type { ServiceName } from '../infra/services'

export type Notice =
  /** The control plane restarted `services`; `generations` are the restart generations it wrote. */
  | { readonly kind: 'restart'; readonly services: readonly ServiceName[]; readonly generations: Readonly<Partial<Record<ServiceName, number>>> }
  /** A schema was written to this deployment's own registry (`count`: the change counter after it, where there is one): cached lookups of it are stale. */
  | { readonly kind: 'registry-changed'; readonly count?: number }
  /** An event specification was published, deprecated or deleted (`count`: the change counter after it): enrich's copy is stale. */
  | { readonly kind: 'specs-changed'; readonly count?: number }

type Kind = Notice['kind']
type Handler<K extends Kind> = (n: Extract<Notice, { kind: K }>) => void

const handlers = new Map<Kind, Set<(n: Notice) => void>>()
const threads = new Set<(n: Notice) => void>()

/** Runs `h` for every notice of `kind` announced in this thread or received from another one. */
export function onNotice<K extends Kind>(kind: K, h: Handler<K>): () => void {
  let set = handlers.get(kind)
  if (!set) handlers.set(kind, (set = new Set()))
  const f = h as (n: Notice) => void
  set.add(f)
  return () => set.delete(f)
}

/** Sends every notice announced in this thread to another thread too (the local stack's function workers). */
export function forwardNotices(send: (n: Notice) => void): () => void {
  threads.add(send)
  return () => threads.delete(send)
}

/** Handles `n` in this thread, then sends it to the other threads. */
export function announce(n: Notice): void {
  deliver(n)
  for (const send of threads) send(n)
}

/** A notice another thread announced: handled in this thread only. */
export function deliver(n: Notice): void {
  for (const h of handlers.get(n.kind) ?? []) h(n)
}
