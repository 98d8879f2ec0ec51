/**
 * The store watch behind `/micro/wait`: one read of the change counter per
 * tick for all waiters (none while nobody waits), waiters woken only when the
 * counter moved, a nudge reads at once, a wait ends at its time.
 */
import { describe, expect, it } from 'vitest'
import { StoreWatch, type WatchClock } from '../../../lib/core/search/store-watch'

/** Timers run by hand: `advance(ms)` fires what is due, in order. */
function manualClock() {
  let now = 0
  let next = 0
  const timers = new Map<number, { at: number; fn: () => void }>()
  const clock: WatchClock = {
    setTimeout: (fn, ms) => {
      const id = ++next
      timers.set(id, { at: now + ms, fn })
      return id
    },
    clearTimeout: (h) => void timers.delete(h as number),
  }
  const flush = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve()
  }
  return {
    clock,
    pending: () => timers.size,
    async advance(ms: number) {
      const end = now + ms
      for (;;) {
        await flush()
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0]
        if (!due) break
        timers.delete(due[0])
        now = due[1].at
        due[1].fn()
      }
      now = end
      await flush()
    },
  }
}

function counter() {
  let version = 0
  let reads = 0
  return {
    read: async () => {
      reads++
      return String(version)
    },
    write: () => void version++,
    reads: () => reads,
  }
}

describe('StoreWatch', () => {
  it('reads once per tick for every waiter, and not at all when nobody waits', async () => {
    const c = counter()
    const m = manualClock()
    const watch = new StoreWatch({ read: c.read, intervalMs: 100, clock: m.clock })
    await m.advance(1_000)
    expect(c.reads()).toBe(0)
    const waits = Array.from({ length: 50 }, () => watch.changedSince('0', 10_000))
    expect(watch.waiting).toBe(50)
    await m.advance(1_000)
    // 50 waiters over 1 s of 100 ms ticks: one read per tick (11 with the first), not 50 per tick
    expect(c.reads()).toBeLessThanOrEqual(11)
    c.write()
    await m.advance(100)
    expect(await Promise.all(waits)).toEqual(Array(50).fill('1'))
    expect(watch.waiting).toBe(0)
    const after = c.reads()
    await m.advance(1_000)
    expect(c.reads()).toBe(after) // stopped with the last waiter
    expect(m.pending()).toBe(0)
  })

  it('wakes a waiter only when the counter moved from what it saw', async () => {
    const c = counter()
    const m = manualClock()
    const watch = new StoreWatch({ read: c.read, intervalMs: 100, clock: m.clock })
    let woke: string | undefined | null = null
    void watch.changedSince('0', 10_000).then((v) => (woke = v))
    await m.advance(500)
    expect(woke).toBeNull()
    c.write()
    await m.advance(100)
    expect(woke).toBe('1')
    // a waiter that saw an older counter wakes at the first read
    const stale = watch.changedSince('0', 10_000)
    await m.advance(0)
    expect(await stale).toBe('1')
  })

  it('ends a wait at its time with undefined', async () => {
    const c = counter()
    const m = manualClock()
    const watch = new StoreWatch({ read: c.read, intervalMs: 100, clock: m.clock })
    let out: string | undefined | null = null
    void watch.changedSince('0', 350).then((v) => (out = v))
    await m.advance(349)
    expect(out).toBeNull()
    await m.advance(1)
    expect(out).toBeUndefined()
    expect(watch.waiting).toBe(0)
    expect(await watch.changedSince('0', 0)).toBeUndefined()
  })

  it('reads at once when nudged (a write of this process), without waiting for the tick', async () => {
    const c = counter()
    const m = manualClock()
    const watch = new StoreWatch({ read: c.read, intervalMs: 10_000, clock: m.clock })
    const w = watch.changedSince('0', 60_000)
    await m.advance(0)
    const before = c.reads()
    c.write()
    watch.nudge()
    await m.advance(0)
    expect(await w).toBe('1')
    expect(c.reads()).toBe(before + 1)
  })

  it('keeps watching through a failed read', async () => {
    const c = counter()
    const m = manualClock()
    let fail = true
    const errors: unknown[] = []
    const watch = new StoreWatch({ read: async () => (fail ? Promise.reject(new Error('store down')) : c.read()), intervalMs: 100, clock: m.clock, onError: (e) => errors.push(e) })
    let out: string | undefined | null = null
    void watch.changedSince('0', 10_000).then((v) => (out = v))
    await m.advance(300)
    expect(errors.length).toBeGreaterThan(0)
    fail = false
    c.write()
    await m.advance(100)
    expect(out).toBe('1')
  })
})
