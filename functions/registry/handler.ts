import { registryFromEnvironment } from '../../lib/aws/registry-service'
import { httpLambda } from '../../lib/aws/lambda'

/** The Iglu-compatible schema registry under `/registry-server`. */
export const handler = httpLambda(registryFromEnvironment())
