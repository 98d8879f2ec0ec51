/**
 * `floe credentials reset`: new sign-in credentials for the pages, in the
 * local stack or a deployed one (`--stack`), written straight to the settings
 * table with the caller's access to it (locally the emulator, on AWS the
 * caller's IAM permissions). A generated password is printed once, here, and
 * nowhere else.
 */
import { CredentialsConfigError } from '../core/auth/basic'
import { credentialStoreOf, resetCredentials, resetSuperKey } from '../aws/secrets'
import type { Command } from './command'
import { usageError, UsageError } from './command'
import { withTarget } from './org'
import { takeTargetOptions, TARGET_USAGE, type TargetOptions } from './target'

const RESET_USAGE = `credentials reset ${TARGET_USAGE}`

/** How long a running Floe may still accept what it read before (its cache of the stored credentials). */
const CREDENTIALS_SEEN_WITHIN = '5 seconds'

export const credentialsResetCommand: Command = {
  name: 'credentials reset',
  usage: RESET_USAGE,
  summary:
    'Set new sign-in credentials for the pages: the username of FLOE_USERNAME (else the current one) and the password of FLOE_PASSWORD, or a generated password printed once (never logged).',
  async run(args) {
    const { target, rest } = takeTargetOptions(args, RESET_USAGE)
    if (rest.length > 0) throw usageError(RESET_USAGE, `unexpected ${rest.join(' ')} (the new password is read from FLOE_PASSWORD, never from the command line)`)
    let r
    try {
      r = await withTarget(target, (t) => resetCredentials(credentialStoreOf(t.ddb, t.names, t.seal), process.env))
    } catch (err) {
      if (err instanceof CredentialsConfigError) throw new UsageError(err.message)
      throw err
    }
    process.stdout.write(
      r.generatedPassword
        ? `Credentials set: username ${r.username}, password ${r.generatedPassword}\nThe password is shown only this once.\n`
        : `Credentials set: username ${r.username}, password from FLOE_PASSWORD.\n`,
    )
    process.stdout.write(`Sign in with them within ${CREDENTIALS_SEEN_WITHIN}; the old password stops working then.\n`)
    return 0
  },
}

/** `floe registry superkey --reset`: a new generated super API key, stored hashed and printed once. */
export async function resetSuperKeyCommand(target: TargetOptions): Promise<number> {
  const key = await withTarget(target, (t) => resetSuperKey(t.ddb, t.names, t.seal))
  process.stdout.write(`Super API key changed. New key (shown once): ${key}\nThe registry uses it within 30 seconds; a key from FLOE_SUPER_API_KEY stays valid while that variable is set.\n`)
  return 0
}
