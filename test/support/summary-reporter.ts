import type { Reporter, TestModule } from 'vitest/node'

/** Ends the run with one plain line: `N passed, N failed, N skipped`. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const m of modules) {
      let failedHere = 0
      for (const t of m.children.allTests()) {
        const s = t.result().state
        if (s === 'passed') passed++
        else if (s === 'failed') failedHere++
        else skipped++
      }
      // A file that failed outside its tests (an import or a hook) counts as one failure.
      failed += failedHere > 0 ? failedHere : m.state() === 'failed' ? 1 : 0
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}
