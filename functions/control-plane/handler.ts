import { controlPlaneFromEnvironment } from '../../lib/aws/control-plane-service'
import { queueRecovery, recoveryStatus } from '../../lib/aws/recover-queue'
import { runRecovery } from '../../lib/aws/recover-service'
import { API_FOLLOW_MS, RECOVER_PATH, recoverApi } from '../../lib/core/recover/api'
import { httpLambda } from '../../lib/aws/lambda'
import type { HttpHandler } from '../../lib/http/types'

const controlPlane = controlPlaneFromEnvironment()
// on AWS a replay larger than one request goes to the recovery worker's queue (locally there is none: it runs here)
// a replay follows its events in the store within the invocation's time (the rest: GET …/recover/<run id>)
const recovery = recoverApi({ run: (req) => runRecovery(req, { followUntil: Date.now() + API_FOLLOW_MS }), queue: queueRecovery, status: recoveryStatus })

/** `/control-plane/recover` (recovery of failed events), then the rest of the control plane. */
const routed: HttpHandler = (req) => (req.path.replace(/\/+$/, '') === RECOVER_PATH || req.path.startsWith(`${RECOVER_PATH}/`) ? recovery(req) : controlPlane(req))

/** The control plane under `/control-plane` (Snowplow Mini's endpoints, and recovery), behind basic authentication. */
export const handler = httpLambda(routed, { auth: 'basic' })
