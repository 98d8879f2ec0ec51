import { useEffect, useRef, useState } from 'preact/hooks'

/**
 * Calls `fn` now (and whenever `deps` change), then every `ms` while
 * `enabled` (`ms` 0: once only): never two at once, not while the tab is
 * hidden (at once when it is shown again).
 */
export function usePoll(fn, ms, deps = [], enabled = true) {
  const ref = useRef(fn)
  ref.current = fn
  useEffect(() => {
    if (!enabled) return undefined
    let stopped = false
    let running = false
    let timer
    const schedule = () => {
      clearTimeout(timer)
      if (!stopped && ms > 0) timer = setTimeout(tick, ms)
    }
    const tick = async () => {
      if (stopped) return
      if ((!document.hidden || ms <= 0) && !running) {
        running = true
        try {
          await ref.current()
        } catch (err) {
          console.error(err)
        } finally {
          running = false
        }
      }
      schedule()
    }
    const onVisible = () => {
      if (!document.hidden && ms > 0) tick()
    }
    tick()
    document.addEventListener('visibilitychange', onVisible)
    return () => {
      stopped = true
      clearTimeout(timer)
      document.removeEventListener('visibilitychange', onVisible)
    }
  }, [enabled, ms, ...deps])
}

/** The current time, updated every `ms`. */
export function useNow(ms = 1000) {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms)
    return () => clearInterval(t)
  }, [ms])
  return now
}

/** A value kept in localStorage under `key`. */
export function useStored(key, initial) {
  const [value, setValue] = useState(() => {
    try {
      const raw = localStorage.getItem(key)
      return raw === null ? initial : JSON.parse(raw)
    } catch {
      return initial
    }
  })
  const set = (v) => {
    setValue((prev) => {
      const next = typeof v === 'function' ? v(prev) : v
      try {
        localStorage.setItem(key, JSON.stringify(next))
      } catch {
        // storage full or disabled: kept for this page only
      }
      return next
    })
  }
  return [value, set]
}

/** The location hash (without `#`), following its changes. */
export function useHash() {
  const [hash, setHash] = useState(location.hash.slice(1))
  useEffect(() => {
    const on = () => setHash(location.hash.slice(1))
    window.addEventListener('hashchange', on)
    return () => window.removeEventListener('hashchange', on)
  }, [])
  return hash
}
