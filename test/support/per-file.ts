/** Something a test file starts once before its tests and stops after them. */
import { afterAll, beforeAll } from 'vitest'

/**
 * Starts `start()` before the file's tests (within `timeoutMs`, else the hook timeout) and gives it to
 * `stop` after them; read `.current` inside tests and hooks (`what` names it when it is read too early).
 */
export function useForFile<T>(what: string, start: () => Promise<T>, stop: (it: T) => Promise<unknown>, timeoutMs?: number): { readonly current: T } {
  const holder: { current?: T } = {}
  beforeAll(async () => {
    holder.current = await start()
  }, timeoutMs)
  afterAll(async () => {
    if (holder.current !== undefined) await stop(holder.current)
  })
  return {
    get current(): T {
      if (holder.current === undefined) throw new Error(`${what} is not started yet (use it inside tests or hooks)`)
      return holder.current
    },
  }
}
