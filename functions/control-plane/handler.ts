import { controlPlaneFromEnvironment } from '../../lib/aws/control-plane-service'
import { httpLambda } from '../../lib/aws/lambda'

/** The control plane under `/control-plane` (Snowplow Mini's endpoints), behind basic authentication. */
export const handler = httpLambda(controlPlaneFromEnvironment(), { auth: 'basic' })
