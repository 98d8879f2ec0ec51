import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { makeClients, type AwsClients, type LocalEndpoints } from '../../lib/aws/clients'
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack'
import { useForFile } from './per-file'

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

/** The credentials of the pages and APIs behind basic authentication in test stacks. */
export const TEST_CREDENTIALS = { username: 'floe', password: 'TestPassword2024' } as const

/** The `Authorization` header of `TEST_CREDENTIALS` (or of other credentials). */
export function basicAuth(username: string = TEST_CREDENTIALS.username, password: string = TEST_CREDENTIALS.password): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
}

/** Headers with the test stack's basic authentication added. */
export function withAuth(headers: Record<string, string> = {}): Record<string, string> {
  return { authorization: basicAuth(), ...headers }
}

/**
 * Starts an isolated local stack (own resource names, shared emulators) for
 * the test file, and stops it afterwards. Read `.current` inside tests.
 */
export function useLocalStack(opts: Omit<LocalStackOptions, 'endpoints'> = {}): { readonly current: LocalStack } {
  return useForFile(
    'the local stack',
    () =>
      startLocalStack({
        endpoints: sharedEndpoints(),
        namePrefix: uniquePrefix(),
        pollIntervalMs: 50,
        retryDelayMs: 10,
        triggerOverrides: { maxBatchingWindowSeconds: 0 },
        ...opts,
        environment: { FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password, ...opts.environment },
      }),
    (stack) => stack.stop(),
  )
}
