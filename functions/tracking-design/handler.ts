import { httpLambda } from '../../lib/aws/lambda'
import { trackingDesignFromEnvironment } from '../../lib/aws/tracking-design-service'

/** The tracking-design API under /api/msc/v1. */
export const handler = httpLambda(trackingDesignFromEnvironment())
