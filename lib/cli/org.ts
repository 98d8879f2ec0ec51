/** `floe org create`: organizations of the tracking-design API in the running local stack. */
import { makeClients } from '../aws/clients'
import { DynamoAccountStore } from '../aws/tracking-design-store'
import { createOrganization } from '../core/tracking-design/accounts'
import { localName } from '../infra/resources'
import type { Command } from './command'
import { usageError, UsageError } from './command'
import { readEndpointsFile } from './tail'

/** The account store of the local stack found through `${FLOE_DATA_DIR:-.floe}/endpoints.json`. */
export function localAccountStore(): DynamoAccountStore {
  const ep = readEndpointsFile()
  const prefix = ep.namePrefix ?? 'floe'
  const { ddb } = makeClients({ dynamodb: ep.dynamodb, kinesis: ep.kinesis, s3: ep.s3 })
  return new DynamoAccountStore(ddb, localName('apiKeys', prefix), localName('settings', prefix))
}

/** Reads `--name value` / `--name=value` options; every other argument is an error. */
export function options(args: readonly string[], allowed: readonly string[], usage: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a)
    if (!m || !allowed.includes(m[1]!)) throw usageError(usage, `unexpected argument '${a}'`)
    const v = m[2] ?? args[++i]
    if (v === undefined) throw usageError(usage, `--${m[1]} needs a value`)
    out[m[1]!] = v
  }
  return out
}

const CREATE_USAGE = 'org create --name <name>'

export const orgCommands = [
  {
    name: 'org create',
    usage: CREATE_USAGE,
    summary: 'Creates an organization in the local stack and prints its id (a UUID).',
    async run(args: string[]) {
      const o = options(args, ['name'], CREATE_USAGE)
      if (!o.name) throw usageError(CREATE_USAGE, '--name is required')
      const r = await createOrganization(localAccountStore(), o.name, new Date())
      if (!r.ok) throw new UsageError(r.message)
      process.stdout.write(`${r.value.id}\n`)
      return 0
    },
  },
] as const satisfies readonly Command[]
