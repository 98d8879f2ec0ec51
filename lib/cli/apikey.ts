/** `floe apikey create|revoke`: organization API keys in the running local stack. */
import { createApiKey, revokeApiKey } from '../core/tracking-design/accounts'
import type { Command } from './command'
import { usageError } from './command'
import { localAccountStore, options } from './org'

const CREATE_USAGE = 'apikey create --org <organizationId> [--json]'
const REVOKE_USAGE = 'apikey revoke <keyId>'

export const apikeyCommands = [
  {
    name: 'apikey create',
    usage: CREATE_USAGE,
    summary: 'Creates an API key for an organization; prints the key id and the secret key (shown once, stored hashed).',
    async run(args: string[]) {
      const json = args.includes('--json')
      const o = options(args.filter((a) => a !== '--json'), ['org'], CREATE_USAGE)
      if (!o.org) throw usageError(CREATE_USAGE, '--org is required')
      const r = await createApiKey(localAccountStore(), o.org, new Date())
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
    summary: 'Revokes an API key: no new tokens, and tokens issued with it stop working.',
    async run(args: string[]) {
      if (args.length !== 1) throw usageError(REVOKE_USAGE)
      const r = await revokeApiKey(localAccountStore(), args[0]!)
      if (!r.ok) {
        process.stderr.write(`floe apikey revoke: ${r.message}\n`)
        return 1
      }
      process.stdout.write(`revoked ${args[0]!.toLowerCase()}\n`)
      return 0
    },
  },
] as const satisfies readonly Command[]
