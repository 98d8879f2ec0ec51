/**
 * How a secret is kept where it is stored: the port the stores of the
 * token signing secret, the pages' password hash and the registry's super
 * key hash write through. The local stack seals them (authenticated
 * encryption with a key that never enters the store, see
 * `lib/runtime/secrets-at-rest.ts`), so whoever reads its database on
 * loopback can neither use them nor test guesses against them; on AWS they
 * are stored as they are, under IAM and DynamoDB's encryption at rest.
 */

export interface SecretSeal {
  /** What the store writes for `plain`; `purpose` names the value (a sealed value opens under its own purpose only). */
  seal(plain: string, purpose: string): string
  /** The value of a stored one: a value written before sealing (in clear) is returned as it is; throws `UnopenableSecretError` when a sealed one cannot be opened. */
  open(stored: string, purpose: string): string
  /** Whether `stored` is in clear where this seal would seal it (written before: to seal at start). */
  needsSealing(stored: string): boolean
}

/** A sealed value that this seal cannot open: sealed with another key, or altered. */
export class UnopenableSecretError extends Error {
  override readonly name = 'UnopenableSecretError'
}

/** The prefix of a sealed value (any seal: a seal without the key knows it cannot open one). */
export const SEALED_PREFIX = 'floe-sealed:'

/** Secrets stored as they are (AWS: IAM and DynamoDB's encryption at rest protect them). */
export const STORED_AS_IS: SecretSeal = {
  seal: (plain) => plain,
  open: (stored, purpose) => {
    if (stored.startsWith(SEALED_PREFIX)) throw new UnopenableSecretError(`${purpose} is sealed, and no key to open it is configured`)
    return stored
  },
  needsSealing: () => false,
}

/** The purposes of the sealed values, one per stored secret. */
export const SECRET_PURPOSES = {
  passwordHash: 'dashboard/credentials/hash',
  superKeyHash: 'registry/superApiKey/hash',
  signingSecret: 'tracking-design/jwtSecret/secret',
} as const
