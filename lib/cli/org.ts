/** `floe org create`: organizations of the tracking-design API, in the local stack or a deployed one (`--stack`). */
import { DynamoAccountStore } from '../aws/tracking-design-store'
import { createOrganization } from '../core/tracking-design/accounts'
import type { Command } from './command'
import { usageError, UsageError } from './command'
import { localTarget, onTarget, resolveTarget, takeTargetOptions, TARGET_USAGE, type Target, type TargetOptions } from './target'

/** The account store (API keys and settings tables) of a target. */
export function accountStore(target: Target): DynamoAccountStore {
  return new DynamoAccountStore(target.ddb, target.names.tables.apiKeys, target.names.tables.settings, target.seal)
}

/** The account store of the local stack found through `${FLOE_DATA_DIR:-.floe}/endpoints.json`. */
export function localAccountStore(): DynamoAccountStore {
  return accountStore(localTarget())
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

/** Runs `call` on the target the options name, with its AWS errors made readable. */
export async function withTarget<T>(o: TargetOptions, call: (target: Target) => Promise<T>): Promise<T> {
  const target = await resolveTarget(o)
  try {
    return await onTarget(target, () => call(target))
  } finally {
    target.ddb.destroy()
    target.kinesis.destroy()
  }
}

const CREATE_USAGE = `org create --name <name> ${TARGET_USAGE}`

export const orgCommands = [
  {
    name: 'org create',
    usage: CREATE_USAGE,
    summary: 'Create an organization in the local stack (or the deployment of --stack) and print its id (a UUID).',
    async run(args: string[]) {
      const { target, rest } = takeTargetOptions(args, CREATE_USAGE)
      const o = options(rest, ['name'], CREATE_USAGE)
      if (!o.name) throw usageError(CREATE_USAGE, '--name is required')
      const r = await withTarget(target, (t) => createOrganization(accountStore(t), o.name!, new Date()))
      if (!r.ok) throw new UsageError(r.message)
      process.stdout.write(`${r.value.id}\n`)
      return 0
    },
  },
] as const satisfies readonly Command[]
