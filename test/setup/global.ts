import type { TestProject } from 'vitest/node'
import { startEmulators } from '../../lib/local/emulators'

declare module 'vitest' {
  export interface ProvidedContext {
    endpoints: { dynamodb: string; kinesis: string; s3: string; postgres?: string }
  }
}

/** Starts DynamoDB Local, kinesalite, s3rver and the search store's PostgreSQL once per test run, on free ports, their data discarded at the end. */
export default async function setup(project: TestProject) {
  const emulators = await startEmulators()
  project.provide('endpoints', emulators.endpoints)
  return async () => {
    await emulators.stop()
  }
}
