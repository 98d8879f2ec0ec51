import { CfnOutput, type Stack } from 'aws-cdk-lib'
import type { DataResources } from './function'
import { outputKey } from './outputs'
import type { BucketKey, StreamKey, TableKey } from './resources'

/**
 * The outputs `floe … --stack <name>` reads (see `./outputs.ts`): the physical
 * name of every table, stream and bucket. The API URL output is declared with the API.
 */
export function addLocationOutputs(stack: Stack, data: DataResources): void {
  for (const [k, t] of Object.entries(data.tables)) {
    new CfnOutput(stack, outputKey('table', k), { value: t.tableName, description: `Physical name of the ${k as TableKey} table` })
  }
  for (const [k, s] of Object.entries(data.streams)) {
    new CfnOutput(stack, outputKey('stream', k), { value: s.streamName, description: `Physical name of the ${k as StreamKey} stream` })
  }
  for (const [k, b] of Object.entries(data.buckets)) {
    new CfnOutput(stack, outputKey('bucket', k), { value: b.bucketName, description: `Physical name of the ${k as BucketKey} bucket` })
  }
}
