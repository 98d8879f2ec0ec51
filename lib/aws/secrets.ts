/**
 * The two secrets a Floe hands out, the sign-in password of the pages and the
 * registry's super API key, set where they are stored (the settings table),
 * for `floe start` and `floe credentials reset` / `floe registry superkey
 * --reset`, locally or on a deployment. A generated secret is returned to be
 * shown once on the terminal; it is never written to a log.
 */
import { randomUUID } from 'node:crypto'
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import {
  CredentialsConfigError, ensureCredentials, generatePassword, hashCredentials, passwordProblem, usernameProblem, verifyCredentials, type CredentialStore,
} from '../core/auth/basic'
import { hashKey } from '../core/iglu/apikeys'
import type { ResourceNames } from '../infra/resources'
import { DynamoCredentialStore } from './credentials-store'
import { DynamoKeyStore } from './registry-store'
import { DynamoAccountStore } from './tracking-design-store'
import type { SecretSeal } from '../core/secrets-at-rest'

/** The stores take this process's seal (`runtimeSeal`) unless given one (the CLI gives its target's). */
export function credentialStoreOf(ddb: DynamoDBClient, names: ResourceNames, seal?: SecretSeal): DynamoCredentialStore {
  return new DynamoCredentialStore(ddb, names.tables.settings, seal)
}

function keyStoreOf(ddb: DynamoDBClient, names: ResourceNames, seal?: SecretSeal): DynamoKeyStore {
  return new DynamoKeyStore(ddb, names.tables.apiKeys, names.tables.settings, seal)
}

/**
 * Seals the secrets an older version wrote in clear (the pages' password hash, the registry's super
 * key hash, the token signing secret), each written back only if unchanged meanwhile; the lines to log
 * say what was done and which stored secret cannot be opened with the key (and how to replace it).
 */
export async function sealStoredSecrets(ddb: DynamoDBClient, names: ResourceNames, seal: SecretSeal): Promise<string[]> {
  const outcomes = {
    'the sign-in password hash': await credentialStoreOf(ddb, names, seal).sealStored(),
    "the registry's super key hash": await keyStoreOf(ddb, names, seal).sealStoredSuperKey(),
    'the token signing secret': await new DynamoAccountStore(ddb, names.tables.apiKeys, names.tables.settings, seal).sealStoredSigningSecret(),
  }
  const lines: string[] = []
  const sealed = Object.entries(outcomes).filter(([, o]) => o === 'sealed').map(([what]) => what)
  if (sealed.length > 0) lines.push(`secrets at rest: sealed ${sealed.join(', ')} (stored in clear by an older version)`)
  const remedies: Record<string, string> = {
    'the sign-in password hash': "no password signs in until 'npx floe credentials reset' sets a new one",
    "the registry's super key hash": "'npx floe registry superkey --reset' sets a new super key (FLOE_SUPER_API_KEY still works)",
    'the token signing secret': 'a new one replaces it at the first request; tokens signed before stop working',
  }
  for (const [what, o] of Object.entries(outcomes)) {
    if (o === 'unopenable') lines.push(`secrets at rest: ${what} was sealed with another key than this data directory's secrets.key and cannot be opened: ${remedies[what]}`)
  }
  return lines
}

/**
 * A registry super API key when none is configured (`FLOE_SUPER_API_KEY`) nor
 * stored: generated, stored hashed, and returned to be shown once; undefined
 * when there is one already.
 */
export async function ensureSuperKey(ddb: DynamoDBClient, names: ResourceNames, env: NodeJS.ProcessEnv, seal?: SecretSeal): Promise<string | undefined> {
  if (env.FLOE_SUPER_API_KEY?.trim()) return undefined
  const keys = keyStoreOf(ddb, names, seal)
  if (await keys.getSuperKeyHash()) return undefined
  const key = randomUUID()
  return (await keys.putSuperKeyHash(hashKey(key), { onlyIfAbsent: true })) ? key : undefined
}

/** Replaces the stored super API key by a new generated one, returned to be shown once. */
export async function resetSuperKey(ddb: DynamoDBClient, names: ResourceNames, seal?: SecretSeal): Promise<string> {
  const key = randomUUID()
  await keyStoreOf(ddb, names, seal).putSuperKeyHash(hashKey(key), { onlyIfAbsent: false })
  return key
}

/**
 * The sign-in credentials at a start: stored from `FLOE_USERNAME` and
 * `FLOE_PASSWORD` (or a generated password, returned to be shown once) when
 * none are stored. When some are and the variables name others, `differs`
 * says which variables are not applied.
 */
export async function startCredentials(
  store: CredentialStore,
  env: NodeJS.ProcessEnv,
): Promise<{ username: string; generatedPassword?: string; fromEnv: boolean; differs?: string[] }> {
  let generatedPassword: string | undefined
  const r = await ensureCredentials(store, env, (_u, p) => {
    generatedPassword = p
  })
  if (r.created) return { username: r.username, ...(generatedPassword ? { generatedPassword } : {}), fromEnv: !generatedPassword }
  const stored = await store.get()
  const username = env.FLOE_USERNAME?.trim()
  const password = env.FLOE_PASSWORD?.trim()
  const differs: string[] = []
  if (stored && username && username !== stored.username) differs.push('FLOE_USERNAME')
  if (stored && password && !(await verifyCredentials(stored, stored.username, password))) differs.push('FLOE_PASSWORD')
  return { username: r.username, fromEnv: false, ...(differs.length ? { differs } : {}) }
}

/**
 * Sets new credentials: the username of `FLOE_USERNAME` (else the stored one,
 * else `floe`) and the password of `FLOE_PASSWORD`, or a generated one
 * (returned to be shown once). Variables that break the rules are refused.
 */
export async function resetCredentials(store: CredentialStore, env: NodeJS.ProcessEnv, now = new Date()): Promise<{ username: string; generatedPassword?: string }> {
  const configuredUser = env.FLOE_USERNAME?.trim()
  if (configuredUser) {
    const problem = usernameProblem(configuredUser)
    if (problem) throw new CredentialsConfigError(`FLOE_USERNAME: ${problem}`)
  }
  const configured = env.FLOE_PASSWORD?.trim()
  if (configured) {
    const problem = passwordProblem(configured)
    if (problem) throw new CredentialsConfigError(`FLOE_PASSWORD: ${problem}`)
  }
  const password = configured || generatePassword()
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await store.get()
    const username = configuredUser || current?.username || 'floe'
    const next = await hashCredentials(username, password, (current?.version ?? 0) + 1, now)
    const done = current ? await store.replace(next, current.version) : await store.putIfAbsent(next)
    if (done) return { username, ...(configured ? {} : { generatedPassword: password }) }
  }
  throw new Error('the credentials changed meanwhile three times; try again')
}
