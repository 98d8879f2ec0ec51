/**
 * A stack whose enrich is off for lack of the licence does not work (events
 * wait in the raw stream): /health answers 503 and says so.
 */
import { describe, expect, it } from 'vitest'
import { useLocalStack } from '../../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: '' } })

describe('/health without the licence', () => {
  it('answers 503 with a line saying enrich is off until the licence is accepted', async () => {
    expect(stack.current.disabledTriggers.has('enrich-raw')).toBe(true)
    const res = await fetch(`${stack.current.url}/health`)
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
    const lines = (await res.text()).trim().split('\n')
    expect(lines[0]).toBe('unavailable')
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^enrich-raw is down since \S+: enrich is off until the licence is accepted \(.*ACCEPT_LIMITED_USE_LICENSE=yes\); records wait in the stream$/)])
  })
})
