/** Thrown when the step budget of one check is exhausted. */
export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError'
}

/** Counts abstract work steps and throws {@link BudgetExceededError} once the limit is passed. */
export class Budget {
  private left: number
  constructor(readonly limit: number) {
    this.left = limit
  }
  step(n = 1): void {
    this.left -= n
    if (this.left < 0) throw new BudgetExceededError(`budget of ${this.limit} steps exhausted`)
  }
  get used(): number {
    return this.limit - this.left
  }
}
