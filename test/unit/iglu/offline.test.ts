import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { parseIgluUri, type SchemaKey } from '../../../lib/core/iglu/keys'
import { HttpRepository } from '../../../lib/core/iglu/repositories'
import { networkErrorCode } from '../../../lib/core/iglu/bounded-get'
import { Resolver } from '../../../lib/core/iglu/resolver'

function key(uri: string): SchemaKey {
  const k = parseIgluUri(uri)
  if (!k.ok) throw new Error(uri)
  return k.value
}

/** A loopback port nothing listens on (bound, then released). */
async function unusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('a registry that cannot be reached', () => {
  it('is asked once per lookup (connection refused), and its breaker opens at once', async () => {
    const port = await unusedPort()
    const calls: string[] = []
    const counting: typeof fetch = (input, init) => {
      calls.push(String(input))
      return fetch(input, init)
    }
    const sleeps: number[] = []
    const r = new Resolver({
      repositories: [new HttpRepository(`http://127.0.0.1:${port}`, { name: 'offline', fetch: counting })],
      lookupTimeoutMs: 60_000,
      sleep: async (ms) => void sleeps.push(ms),
    })
    const found = await r.lookupSchema(key('iglu:com.acme/e/jsonschema/1-0-0'))
    expect(found.ok).toBe(false)
    expect(calls).toHaveLength(1)
    expect(sleeps).toEqual([])
    const failing = r.failingRepositories()
    expect(failing).toHaveLength(1)
    expect(failing[0]!.repository).toBe('offline')
    expect(failing[0]!.lastError).toMatch(/ECONNREFUSED/)
    // the next lookup (another schema) is carried by the open breaker: no request
    expect((await r.lookupSchema(key('iglu:com.acme/f/jsonschema/1-0-0'))).ok).toBe(false)
    expect(calls).toHaveLength(1)
  })

  it('a 5xx answer is still retried within the lookup', async () => {
    let calls = 0
    const failing: typeof fetch = async () => new Response('busy', { status: ++calls < 3 ? 503 : 404 })
    const r = new Resolver({
      repositories: [new HttpRepository('http://127.0.0.1:9', { name: 'busy', fetch: failing })],
      lookupTimeoutMs: 60_000,
      sleep: async () => {},
    })
    expect((await r.lookupSchema(key('iglu:com.acme/e/jsonschema/1-0-0'))).ok).toBe(false)
    expect(calls).toBe(3)
    expect(r.failingRepositories()).toEqual([])
  })

  it('network error codes are found in the causes of a failed fetch', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    expect(networkErrorCode(new TypeError('fetch failed', { cause: refused }))).toBe('ECONNREFUSED')
    const dns = Object.assign(new Error('getaddrinfo EAI_AGAIN iglucentral.com'), { code: 'EAI_AGAIN' })
    expect(networkErrorCode(new TypeError('fetch failed', { cause: dns }))).toBe('EAI_AGAIN')
    const many = new AggregateError([Object.assign(new Error('x'), { code: 'ENETUNREACH' }), Object.assign(new Error('y'), { code: 'EHOSTUNREACH' })])
    expect(networkErrorCode(new TypeError('fetch failed', { cause: many }))).toBe('ENETUNREACH')
    expect(networkErrorCode(new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }))).toBeUndefined()
    expect(networkErrorCode(new DOMException('timeout', 'TimeoutError'))).toBeUndefined()
  })
})
