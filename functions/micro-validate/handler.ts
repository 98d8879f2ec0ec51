import { validateFromEnvironment } from '../../lib/aws/validate-service'
import { httpLambda } from '../../lib/aws/lambda'
import { VALIDATE_PREFIX } from '../../lib/core/validate/micro-validate'
import { collectorConfigFromEnv } from '../collector/app'

/** `/micro/validate/<collector path>`: a tracker's request enriched as this stack would, answered, and written nowhere. */
export const handler = httpLambda(validateFromEnvironment({ collectorConfig: collectorConfigFromEnv }), { auth: 'basic', crossSite: { costlyReads: [VALIDATE_PREFIX] } })
