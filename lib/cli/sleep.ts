/** Waits `ms`, or less when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((done) => {
    if (signal?.aborted) return done()
    const t = setTimeout(done, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(t)
      done()
    }, { once: true })
  })
}
