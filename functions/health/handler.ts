import { httpLambda } from '../../lib/http/lambda'
import { text } from '../../lib/http/types'

export const handler = httpLambda(() => text(200, 'ok'))
