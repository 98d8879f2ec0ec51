import { controlPlaneFromEnvironment } from '../../lib/aws/control-plane-service'
import { runRecovery } from '../../lib/aws/recover-service'
import { RECOVER_PATH, recoverApi } from '../../lib/core/recover/api'
import { httpLambda } from '../../lib/aws/lambda'
import type { HttpHandler } from '../../lib/http/types'

const controlPlane = controlPlaneFromEnvironment()
const recovery = recoverApi({ run: (req) => runRecovery(req) })

/** `/control-plane/recover` (recovery of failed events), then the rest of the control plane. */
const routed: HttpHandler = (req) => (req.path.replace(/\/+$/, '') === RECOVER_PATH ? recovery(req) : controlPlane(req))

/** The control plane under `/control-plane` (Snowplow Mini's endpoints, and recovery), behind basic authentication. */
export const handler = httpLambda(routed, { auth: 'basic' })
