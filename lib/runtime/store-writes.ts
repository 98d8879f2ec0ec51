/**
 * Within one process: a loader that has just committed rows to the search
 * store tells whoever watches it (`/micro/wait`'s watch reads the store's
 * change counter at once rather than at its next tick). Locally the loader and
 * the API share the stack's process; on AWS they are separate functions, and
 * the watch's own ticks see the change (lib/core/search/store-watch.ts).
 */
const listeners = new Set<() => void>()

/** Called by a loader after its transaction committed. */
export function searchStoreWritten(): void {
  for (const l of listeners) l()
}

/** Calls `fn` after each write of this process; returns the unsubscribe. */
export function onSearchStoreWritten(fn: () => void): () => void {
  listeners.add(fn)
  return () => listeners.delete(fn)
}
