import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    env: {
      CDK_VALIDATION: 'false',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at a time even on two cores (vitest's default leaves one core to itself): most stack files wait on I/O.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        // Pure code, no process-wide state: the files share their workers (a fresh process per file costs more than most of them take).
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      {
        // Emulators started once for the run (see the global setup); each file in a process of its own.
        extends: true,
        test: { name: 'stack', include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'], globalSetup: ['test/setup/global.ts'] },
      },
    ],
  },
})
