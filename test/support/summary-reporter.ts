import type { Reporter, TestModule } from 'vitest/node'

/**
 * Ends the run with the files that took longest (tests and hooks, and the
 * import of the file) and one plain line: `N passed, N failed, N skipped`.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    const slowest = modules
      .map((m) => ({ m, d: m.diagnostic() }))
      .sort((a, b) => b.d.duration + b.d.collectDuration - (a.d.duration + a.d.collectDuration))
      .slice(0, 15)
    process.stdout.write('\nslowest files (s: tests and hooks + import):\n')
    for (const { m, d } of slowest) process.stdout.write(`  ${(d.duration / 1000).toFixed(1).padStart(6)} + ${(d.collectDuration / 1000).toFixed(1).padStart(5)}  ${m.relativeModuleId}\n`)
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
