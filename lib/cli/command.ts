/** One `floe` sub-command. `name` may have several words, e.g. `schema compat`. */
export interface Command {
  readonly name: string
  readonly usage: string
  readonly summary: string
  /** Runs the command; resolves to the process exit code. */
  run(args: string[]): Promise<number>
}

/** An error whose message is shown to the user as is, without a stack trace. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}
