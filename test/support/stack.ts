import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, inject } from 'vitest'
import { makeClients, type AwsClients, type LocalEndpoints } from '../../lib/aws/clients'
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack'

/** The emulators started once for the whole run by the global setup. */
export function sharedEndpoints(): LocalEndpoints {
  return inject('endpoints')
}

/** SDK clients for the shared emulators. */
export function testClients(): AwsClients {
  return makeClients(sharedEndpoints())
}

/** A fresh name prefix, so each test file has its own tables, streams and buckets. */
export function uniquePrefix(label = 't'): string {
  return `${label}${randomBytes(4).toString('hex')}`
}

/**
 * Starts an isolated local stack (own resource names, shared emulators) for
 * the test file, and stops it afterwards. Read `.current` inside tests.
 */
export function useLocalStack(opts: Omit<LocalStackOptions, 'endpoints'> = {}): { readonly current: LocalStack } {
  const holder: { current?: LocalStack } = {}
  beforeAll(async () => {
    holder.current = await startLocalStack({
      endpoints: sharedEndpoints(),
      namePrefix: uniquePrefix(),
      pollIntervalMs: 50,
      retryDelayMs: 10,
      triggerOverrides: { maxBatchingWindowSeconds: 0 },
      ...opts,
    })
  })
  afterAll(async () => {
    await holder.current?.stop()
  })
  return {
    get current() {
      if (!holder.current) throw new Error('the local stack is not started yet (use it inside tests or hooks)')
      return holder.current
    },
  }
}
