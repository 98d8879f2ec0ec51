import { clients } from '../../lib/aws/clients'
import { readEnrichPause } from '../../lib/aws/enrich-pause'
import { ENRICH_COMPONENT, ENRICH_OFF_ENV, enrichPausedReason, healthAnswer, LICENCE_OFF_REASON, type HealthLine } from '../../lib/core/health/report'
import { httpLambda } from '../../lib/aws/lambda'
import { text } from '../../lib/http/types'
import { RETRY_AFTER_SECONDS } from '../../lib/http/unavailable'
import { envVar } from '../../lib/infra/resources'
import { downDependencies } from '../../lib/runtime/dependencies'

/** How long the settings read is reused: /health stays one DynamoDB read per few seconds whatever polls it. */
export const HEALTH_CACHE_MS = 5_000
/** How long /health waits for the settings table (a table that does not answer is a cause too). */
const READ_TIMEOUT_MS = 1_500

const started = new Date().toISOString()
let cached: { at: number; lines: Promise<HealthLine[]> } | undefined

/** The causes recorded in the settings table (enrich paused by a set-up failure). */
async function recorded(env: NodeJS.ProcessEnv): Promise<HealthLine[]> {
  const table = env[envVar('table', 'settings')]
  if (!table) return []
  try {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${READ_TIMEOUT_MS / 1000} s`)), READ_TIMEOUT_MS)
    })
    const pause = await Promise.race([readEnrichPause(clients().ddb, table), timeout]).finally(() => clearTimeout(timer))
    return pause ? [{ component: ENRICH_COMPONENT, since: pause.since, reason: enrichPausedReason(pause.reason) }] : []
  } catch (err) {
    return [{ component: 'settings', since: new Date().toISOString(), reason: `the settings table cannot be read: ${(err as Error).message}` }]
  }
}

function recordedCached(env: NodeJS.ProcessEnv, now = Date.now()): Promise<HealthLine[]> {
  if (!cached || now - cached.at >= HEALTH_CACHE_MS) {
    const lines = recorded(env)
    const entry = { at: now, lines }
    cached = entry
    // A failed read is not kept: the next request reads again.
    void lines.then((l) => {
      if (cached === entry && l.some((x) => x.component === 'settings')) cached = undefined
    })
  }
  return cached.lines
}

/**
 * `200` while this instance takes events, `503` on a fault, listing each
 * component that is not simply working (see `healthAnswer`): the components
 * this process saw go down or marked off (the local stack), enrich paused by
 * a set-up failure (a fault, recorded in the settings table, on AWS and
 * locally) and enrich off for lack of the licence (deliberate; on AWS from
 * the deployment, the local stack marks it itself).
 */
export const handler = httpLambda(async () => {
  const env = process.env
  const lines: HealthLine[] = [...downDependencies()]
  if (env[ENRICH_OFF_ENV] === 'licence') lines.push({ component: ENRICH_COMPONENT, since: started, reason: LICENCE_OFF_REASON, state: 'deliberate' })
  const stored = await recordedCached(env)
  // Locally the settings table is DynamoDB Local: while it is named down, that line says why the table cannot be read.
  const dynamoDown = lines.some((l) => l.component === 'dynamodb')
  lines.push(...stored.filter((l) => !(dynamoDown && l.component === 'settings')))
  const answer = healthAnswer(lines)
  return answer.status === 200 ? text(200, answer.body) : text(503, answer.body, { 'retry-after': String(RETRY_AFTER_SECONDS) })
})
