import { httpLambda } from '../../lib/aws/lambda'
import { collectorHttpHandler } from './app'
import { kinesisSink } from './sink'

/** Snowplow-compatible collector behind the HTTP API's `$default` route. */
export const handler = httpLambda(collectorHttpHandler(kinesisSink))
