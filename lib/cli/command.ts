/** One `floe` sub-command. `name` may have several words, e.g. `schema compat`. */
export interface Command {
  readonly name: string
  readonly usage: string
  readonly summary: string
  /** More lines for `--help` (e.g. the environment variables a command reads). */
  readonly details?: string
  /** Runs the command; resolves to the process exit code. */
  run(args: string[]): Promise<number>
}

/** An error whose message is shown to the user as is, without a stack trace. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** A usage error: what is wrong, then the command's usage line. */
export function usageError(usage: string, problem?: string): UsageError {
  return new UsageError(`${problem === undefined ? '' : `${problem}\n`}Usage: floe ${usage}`)
}

/**
 * The positional arguments of `command`, when there are `min` to `max` of
 * them; else a usage error naming the ones its usage line expects.
 */
export function positionals(command: Command, list: readonly string[], min: number, max = min): string[] {
  if (list.length >= min && list.length <= max) return [...list]
  // the usage line's arguments up to its first option
  const words = command.usage.slice(command.name.length).trim().split(' ')
  const firstOption = words.findIndex((w) => w.startsWith('--') || w.startsWith('[--'))
  const expected = (firstOption < 0 ? words : words.slice(0, firstOption)).join(' ')
  throw usageError(command.usage, `expected ${expected}`)
}

/** System error codes of a network that cannot be reached (no connection, no DNS, nobody listening, no answer). */
const NETWORK_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ETIMEDOUT', 'ENETUNREACH', 'EHOSTUNREACH', 'ECONNRESET'])

/**
 * A request that could not reach its service, as one line (undefined for any
 * other error): `cannot reach <host> (ENOTFOUND): …`.
 */
export function networkFailure(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; hostname?: unknown; address?: unknown; port?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    const code = typeof e.code === 'string' ? e.code : undefined
    if (code === undefined || !NETWORK_CODES.has(code)) continue
    const host = typeof e.hostname === 'string' ? e.hostname : typeof e.address === 'string' ? `${e.address}${typeof e.port === 'number' ? `:${e.port}` : ''}` : undefined
    return `cannot reach ${host ?? 'the service'} (${code}): check the network connection${code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? ', the region and any AWS_ENDPOINT_URL* setting' : ''}`
  }
  return undefined
}
