/**
 * The basic-authentication authorizer inside the deployment: the credentials
 * in the settings table, created at first use from `FLOE_USERNAME` and
 * `FLOE_PASSWORD` (or generated and shown nowhere: `floe credentials reset
 * --stack <name>` sets one and shows it; a secret never goes to a log).
 */
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda'
import { Authenticator, ensureCredentials, type Verdict } from '../core/auth/basic'
import { unavailableReason } from '../http/unavailable'
import { restartable } from '../runtime/restarts'
import { tableName } from '../runtime/resources'
import { clients } from './clients'
import { DynamoCredentialStore } from './credentials-store'

/** What the authorizer passes to the function (API Gateway's `requestContext.authorizer.lambda`). */
export interface AuthorizerContext {
  readonly authenticated: boolean
  readonly username?: string
  readonly reason?: string
  readonly retryAfter?: number
  [key: string]: unknown
}

export function credentialStore(): DynamoCredentialStore {
  return new DynamoCredentialStore(clients().ddb, tableName('settings'))
}

const authenticator = restartable(['dashboard'], () => {
  const store = credentialStore()
  let ensured: Promise<unknown> | undefined
  const auth = new Authenticator({ store })
  return {
    async decide(authorization: string | undefined, ip: string): Promise<Verdict> {
      ensured ??= ensureCredentials(store, process.env, (u) =>
        console.log(JSON.stringify({ level: 'info', msg: `no credentials were stored: stored username ${u} with a generated password that is shown nowhere; set a password with 'npx floe credentials reset' (with --stack <name> on AWS)` })),
      ).catch((err) => {
        ensured = undefined
        throw err
      })
      await ensured
      return auth.decide(authorization, ip)
    },
  }
})

/** API Gateway's simple response: always authorized, with the verdict for the function to act on. */
export async function authorize(event: APIGatewayRequestAuthorizerEventV2): Promise<{ isAuthorized: boolean; context: AuthorizerContext }> {
  const header = event.headers?.authorization ?? event.headers?.Authorization
  let verdict: Verdict
  try {
    verdict = await authenticator.get().decide(header, event.requestContext.http.sourceIp)
  } catch (err) {
    // The credentials cannot be read: the function answers 503 with Retry-After (an authorizer error would be a bare 500).
    const reason = unavailableReason(err)
    if (reason === undefined) throw err
    console.error(JSON.stringify({ level: 'warn', msg: 'credentials unavailable', error: reason }))
    return { isAuthorized: true, context: { authenticated: false, reason: 'unavailable', detail: reason } }
  }
  if (verdict.authenticated) return { isAuthorized: true, context: { authenticated: true, username: verdict.username } }
  return {
    isAuthorized: true,
    context: { authenticated: false, reason: verdict.reason, ...(verdict.reason === 'throttled' || verdict.reason === 'busy' ? { retryAfter: verdict.retryAfterSeconds } : {}) },
  }
}
