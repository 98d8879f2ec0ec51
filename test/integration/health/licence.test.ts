/**
 * A stack whose enrich is off for lack of the licence takes events (they
 * wait in the raw stream): /health answers 200 and lists enrich as off on
 * purpose, so a load balancer keeps the collector in.
 */
import { describe, expect, it } from 'vitest'
import { useLocalStack } from '../../support/stack'

const stack = useLocalStack({ environment: { ACCEPT_LIMITED_USE_LICENSE: '' } })

describe('/health without the licence', () => {
  it('answers 200 with a line saying enrich is off on purpose until the licence is accepted', async () => {
    expect(stack.current.disabledTriggers.has('enrich-raw')).toBe(true)
    const res = await fetch(`${stack.current.url}/health`)
    expect(res.status).toBe(200)
    expect(res.headers.get('retry-after')).toBeNull()
    const lines = (await res.text()).trim().split('\n')
    expect(lines[0]).toBe('ok')
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^enrich-raw is off on purpose since \S+: enrich is off until the licence is accepted \(on \/home: .*ACCEPT_LIMITED_USE_LICENSE=yes\); records wait in the stream$/)])
  })
})
