/**
 * The options that name a command's target (`--stack`, `--region`,
 * `--profile`), parsed without loading the AWS SDK: commands that never talk
 * to a deployment start without it (`./target.ts` loads it when one does).
 */
import { usageError, UsageError } from './command'

export interface TargetOptions {
  /** A CloudFormation stack name or id (ARN); absent: the local stack. */
  readonly stack?: string
  readonly region?: string
  readonly profile?: string
}

/** The usage-line suffix of the commands that take a target. */
export const TARGET_USAGE = '[--stack <name> [--region <region>] [--profile <profile>]]'

const TARGET_FLAGS = ['stack', 'region', 'profile'] as const
const STACK_NAME = /^(?:[A-Za-z][A-Za-z0-9-]{0,127}|arn:aws[a-z-]*:cloudformation:[a-z0-9-]+:[0-9]{12}:stack\/[A-Za-z][A-Za-z0-9-]{0,127}\/[0-9a-f-]{36})$/
const REGION = /^[a-z]{2}(?:-[a-z]+)+-[0-9]{1,2}$/
const PROFILE = /^[A-Za-z0-9_.@+-]{1,128}$/

/**
 * Takes `--stack`, `--region` and `--profile` (as `--x value` or `--x=value`)
 * out of a command's arguments; the rest is left for the command.
 */
export function takeTargetOptions(args: readonly string[], usage: string): { target: TargetOptions; rest: string[] } {
  const rest: string[] = []
  const found: Partial<Record<(typeof TARGET_FLAGS)[number], string>> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const m = /^--(stack|region|profile)(?:=(.*))?$/.exec(a)
    if (!m) {
      rest.push(a)
      continue
    }
    const flag = m[1] as (typeof TARGET_FLAGS)[number]
    const v = m[2] ?? args[++i]
    if (v === undefined || v === '' || (m[2] === undefined && v.startsWith('--'))) throw usageError(usage, `--${flag} needs a value`)
    if (found[flag] !== undefined) throw usageError(usage, `--${flag} is given twice`)
    found[flag] = v
  }
  if (found.stack === undefined && (found.region !== undefined || found.profile !== undefined)) {
    throw usageError(usage, `--${found.region !== undefined ? 'region' : 'profile'} goes with --stack <name> (the local stack needs neither)`)
  }
  if (found.stack !== undefined && !STACK_NAME.test(found.stack)) {
    throw new UsageError(`--stack: '${found.stack}' is not a CloudFormation stack name (a letter, then letters, digits and hyphens, at most 128) or stack id`)
  }
  if (found.region !== undefined && !REGION.test(found.region)) throw new UsageError(`--region: '${found.region}' is not an AWS region name (such as eu-west-1)`)
  if (found.profile !== undefined && !PROFILE.test(found.profile)) throw new UsageError(`--profile: '${found.profile}' is not a profile name`)
  return { target: found, rest }
}

