/**
 * The authorizing proxy in front of the Data API server (over PGlite), with
 * the search store's own Data API adapter as the caller: AWS checks both the
 * statement on the cluster and the reading of the secret, so a role without
 * `secretsmanager:GetSecretValue` is refused and its statement never runs.
 * Also: an explicit deny's message, and temporary credentials whose session
 * token must match.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rdsDataClient } from '../../../lib/aws/rds-data'
import { startIamProxy, type Authorize, type IamProxy, type ProxyIdentity } from '../../../lib/local/iam-proxy'
import { DATA_API_TARGET, useRdsDataApi } from '../../support/rds-data-server'

const api = useRdsDataApi()
const { resourceArn, secretArn } = DATA_API_TARGET

interface Policy {
  readonly allow: readonly string[]
  readonly deny?: readonly string[]
}

const identities = new Map<string, ProxyIdentity<Policy>>([
  ['ASIASEARCH', { name: 'Search', sessionToken: 'token-of-search', policies: { allow: [`rds-data:ExecuteStatement ${resourceArn}`, `secretsmanager:GetSecretValue ${secretArn}`] } }],
  ['AKIANOSECRET', { name: 'Loader', policies: { allow: [`rds-data:ExecuteStatement ${resourceArn}`] } }],
  ['AKIADENIED', { name: 'Denied', policies: { allow: [`rds-data:ExecuteStatement ${resourceArn}`, `secretsmanager:GetSecretValue ${secretArn}`], deny: [`rds-data:ExecuteStatement ${resourceArn}`] } }],
])

const authorize: Authorize<Policy> = (identity, r) => {
  const line = `${r.action} ${r.resource}`
  if (identity.policies.deny?.includes(line)) return { decision: 'explicit-deny', statement: { policy: `${identity.name}Policy`, index: 0 } }
  return { decision: identity.policies.allow.includes(line) ? 'allowed' : 'implicit-deny' }
}

let proxy: IamProxy

beforeAll(async () => {
  proxy = await startIamProxy({ target: api.current.server.url, identities, authorize, account: '000000000000', region: 'us-east-1' })
})
afterAll(async () => {
  await proxy?.close()
})

const sql = (accessKeyId: string, sessionToken?: string) =>
  rdsDataClient(DATA_API_TARGET, new RDSDataClient({ endpoint: proxy.url, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey: 's', ...(sessionToken ? { sessionToken } : {}) }, maxAttempts: 1 }), { resumeWaitMs: 0 })

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p
  } catch (e) {
    return e as Error
  }
  throw new Error('the call succeeded')
}

describe('the IAM proxy in front of the Data API', () => {
  it('a role allowed the statement and the secret runs it; both checks are logged', async () => {
    const { rows } = await sql('ASIASEARCH', 'token-of-search').query<{ n: number }>('SELECT 41 + 1 AS n')
    expect(rows).toEqual([{ n: 42 }])
    expect(proxy.calls.slice(-2)).toEqual([
      expect.objectContaining({ function: 'Search', action: 'rds-data:ExecuteStatement', resource: resourceArn, allowed: true }),
      expect.objectContaining({ function: 'Search', action: 'secretsmanager:GetSecretValue', resource: secretArn, allowed: true }),
    ])
  })

  it('a role without the secret is refused with AccessDeniedException naming the secret, and the statement never runs', async () => {
    const before = api.current.server.statements.length
    const err = await failure(sql('AKIANOSECRET').query("SELECT 'never' AS x"))
    expect(err.name).toBe('AccessDeniedException')
    expect(err.message).toContain(`secretsmanager:GetSecretValue on resource: ${secretArn}`)
    expect(api.current.server.statements.length).toBe(before)
    expect(proxy.calls.at(-1)).toMatchObject({ function: 'Loader', action: 'secretsmanager:GetSecretValue', resource: secretArn, allowed: false, decision: 'implicit-deny' })
  })

  it('an explicit deny is reported as one', async () => {
    const err = await failure(sql('AKIADENIED').query('SELECT 1'))
    expect(err.name).toBe('AccessDeniedException')
    expect(err.message).toBe(`User: arn:aws:sts::000000000000:assumed-role/Denied/Denied is not authorized to perform: rds-data:ExecuteStatement on resource: ${resourceArn} with an explicit deny in an identity-based policy`)
    expect(proxy.calls.at(-1)).toMatchObject({ function: 'Denied', allowed: false, decision: 'explicit-deny', statement: { policy: 'DeniedPolicy', index: 0 } })
  })

  it('temporary credentials with another session token are not the identity', async () => {
    const before = proxy.calls.length
    expect((await failure(sql('ASIASEARCH', 'stolen').query('SELECT 1'))).name).toBe('UnrecognizedClientException')
    expect((await failure(sql('ASIASEARCH').query('SELECT 1'))).name).toBe('UnrecognizedClientException')
    expect(proxy.calls.length).toBe(before)
  })
})
