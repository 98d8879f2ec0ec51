import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda'
import { authorize } from '../../lib/aws/authorizer'
import { clients } from '../../lib/aws/clients'
import { checkRestarts } from '../../lib/runtime/restarts'

/** Basic authentication of the pages and APIs declared with `auth: 'basic'`: the verdict, for the function to answer. */
export const handler = async (event: APIGatewayRequestAuthorizerEventV2) => {
  void checkRestarts(() => clients().ddb)
  return authorize(event)
}
