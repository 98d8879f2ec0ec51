import { httpLambda } from '../../lib/http/lambda'
import { text } from '../../lib/http/types'

export const handler = httpLambda(() => text(501, 'not implemented\n'), { auth: 'basic' })
