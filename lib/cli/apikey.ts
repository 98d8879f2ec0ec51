/** `floe apikey create|revoke`: organization API keys, in the local stack or a deployed one (`--stack`). */
import { createApiKey, revokeApiKey } from '../core/tracking-design/accounts'
import type { Command } from './command'
import { usageError } from './command'
import { accountStore, options, withTarget } from './org'
import { takeTargetOptions, TARGET_USAGE } from './target'

const CREATE_USAGE = `apikey create --org <organizationId> [--json] ${TARGET_USAGE}`
const REVOKE_USAGE = `apikey revoke <keyId> ${TARGET_USAGE}`

export const apikeyCommands = [
  {
    name: 'apikey create',
    usage: CREATE_USAGE,
    summary: 'Create an API key for an organization; print the key id and the secret key (shown once, stored hashed).',
    async run(args: string[]) {
      const { target, rest } = takeTargetOptions(args, CREATE_USAGE)
      const json = rest.includes('--json')
      const o = options(rest.filter((a) => a !== '--json'), ['org'], CREATE_USAGE)
      if (!o.org) throw usageError(CREATE_USAGE, '--org is required')
      const r = await withTarget(target, (t) => createApiKey(accountStore(t), o.org!, new Date()))
      if (!r.ok) {
        process.stderr.write(`floe apikey create: ${r.message}\n`)
        return 1
      }
      process.stdout.write(
        json
          ? `${JSON.stringify({ organizationId: o.org.toLowerCase(), apiKeyId: r.value.keyId, apiKey: r.value.secret })}\n`
          : `API key id: ${r.value.keyId}\nAPI key:    ${r.value.secret}\nThe key is shown only once; keep it secret.\n`,
      )
      return 0
    },
  },
  {
    name: 'apikey revoke',
    usage: REVOKE_USAGE,
    summary: 'Revoke an API key: no new tokens, and tokens issued with it stop working.',
    async run(args: string[]) {
      const { target, rest } = takeTargetOptions(args, REVOKE_USAGE)
      if (rest.length !== 1 || rest[0]!.startsWith('--')) throw usageError(REVOKE_USAGE)
      const keyId = rest[0]!
      const r = await withTarget(target, (t) => revokeApiKey(accountStore(t), keyId))
      if (!r.ok) {
        process.stderr.write(`floe apikey revoke: ${r.message}\n`)
        return 1
      }
      process.stdout.write(`revoked ${keyId.toLowerCase()}\n`)
      return 0
    },
  },
] as const satisfies readonly Command[]
