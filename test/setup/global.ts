import type { TestProject } from 'vitest/node'
import { startEmulators } from '../../lib/local/emulators'

declare module 'vitest' {
  export interface ProvidedContext {
    endpoints: { dynamodb: string; kinesis: string; s3: string }
  }
}

/** Starts DynamoDB Local, kinesalite and s3rver once per test run, in memory on free ports. */
export default async function setup(project: TestProject) {
  const emulators = await startEmulators()
  project.provide('endpoints', emulators.endpoints)
  return async () => {
    await emulators.stop()
  }
}
