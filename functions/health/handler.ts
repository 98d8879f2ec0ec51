import { httpLambda } from '../../lib/http/lambda'
import { text } from '../../lib/http/types'
import { RETRY_AFTER_SECONDS } from '../../lib/http/unavailable'
import { downDependencies } from '../../lib/runtime/dependencies'

/** `200 ok`, or `503` naming each component that is down (and since when). */
export const handler = httpLambda(() => {
  const down = downDependencies()
  if (down.length === 0) return text(200, 'ok')
  const lines = down.map((d) => `${d.component} is down since ${d.since}: ${d.reason}`)
  return text(503, `unavailable\n${lines.join('\n')}\n`, { 'retry-after': String(RETRY_AFTER_SECONDS) })
})
