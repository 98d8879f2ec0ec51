import { Stack } from 'aws-cdk-lib'
import { StreamConsumer, type IStream } from 'aws-cdk-lib/aws-kinesis'
import type { IEventSource } from 'aws-cdk-lib/aws-lambda'
import { KinesisConsumerEventSource, KinesisEventSource, type KinesisEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources'
import type { Construct } from 'constructs'
import { triggerId, triggerSettings, type StreamTriggerDecl } from './functions'

const cap = (key: string) => key[0]!.toUpperCase() + key.slice(1)

/**
 * The event source of a stream trigger: a polling mapping on the stream, or,
 * with `enhancedFanOut`, a mapping on an enhanced fan-out consumer registered
 * for this trigger alone (dedicated read throughput; records are pushed). With
 * `AT_TIMESTAMP`, the trigger's timestamp is where the mapping starts.
 */
export function streamTriggerSource(scope: Construct, t: StreamTriggerDecl, stream: IStream, props: KinesisEventSourceProps): IEventSource {
  const s = triggerSettings(t)
  const full: KinesisEventSourceProps = {
    ...props,
    ...(s.startingPosition === 'AT_TIMESTAMP' ? { startingPositionTimestamp: s.startingPositionTimestamp } : {}),
  }
  if (!s.enhancedFanOut) return new KinesisEventSource(stream, full)
  const consumer = new StreamConsumer(scope, `${cap(t.function)}${cap(t.stream)}Consumer`, {
    stream,
    // unique per stream: one deployment's stack and trigger
    streamConsumerName: `${Stack.of(scope).stackName}-${triggerId(t)}`,
  })
  return new KinesisConsumerEventSource(consumer, full)
}
