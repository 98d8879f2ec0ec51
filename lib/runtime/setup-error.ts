/**
 * A function that cannot set itself up (its configuration cannot be built,
 * or what it needs to build it cannot be read): a failure that is not about
 * the records of the invocation. A stream trigger that sees it pauses
 * instead of spending the batch's retries: it keeps its checkpoint, does not
 * send the records to the on-failure location, names the cause on `/health`
 * and tries again with backoff (the configuration may be fixed meanwhile).
 * On Lambda the error's `name` is its `errorType`.
 */
export class FunctionSetupError extends Error {
  override readonly name: string = 'FunctionSetupError'
}

/** Enrich's configuration, enrichments or their assets cannot be loaded. */
export class EnrichSetupError extends FunctionSetupError {
  override readonly name: string = 'EnrichSetupError'
}

/** Whether `err` is a set-up failure (by class here, by name when it crossed a process boundary). */
export function isSetupError(err: unknown): boolean {
  if (err instanceof FunctionSetupError) return true
  const name = (err as { name?: unknown } | null | undefined)?.name
  return name === 'FunctionSetupError' || name === 'EnrichSetupError'
}

/**
 * A function cannot write where its records go (its store is down,
 * restarting or refusing connections): not about the records either. The
 * local stream trigger then waits, as for a set-up failure, spending none of
 * the batch's retries, and `/health` says what cannot be written and how many
 * records wait. On Lambda it is a function error like any other (retried,
 * then the on-failure destination).
 */
export class DependencyUnavailableError extends Error {
  override readonly name: string = 'DependencyUnavailableError'
}

/** Whether `err` is a `DependencyUnavailableError` (by class here, by name when it crossed a process boundary). */
export function isDependencyUnavailable(err: unknown): boolean {
  return err instanceof DependencyUnavailableError || (err as { name?: unknown } | null | undefined)?.name === 'DependencyUnavailableError'
}
