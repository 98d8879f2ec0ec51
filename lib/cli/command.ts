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
