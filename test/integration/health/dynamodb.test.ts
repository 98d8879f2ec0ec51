/**
 * DynamoDB Local that runs but does not answer (its process stopped with
 * SIGSTOP): the stack's liveness probe notices, /health answers 503 naming
 * it, and 200 again once it answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulators, type Emulators } from '../../../lib/local/emulators'
import { startLocalStack, type LocalStack } from '../../../lib/local/stack'
import { eventually } from '../../support/process'
import { TEST_CREDENTIALS, uniquePrefix } from '../../support/stack'

let emulators: Emulators
let stack: LocalStack
let stoppedPid: number | undefined

beforeAll(async () => {
  emulators = await startEmulators()
  stack = await startLocalStack({
    endpoints: emulators.endpoints,
    namePrefix: uniquePrefix(),
    triggers: false,
    environment: { FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password },
  })
}, 120_000)
afterAll(async () => {
  if (stoppedPid) process.kill(stoppedPid, 'SIGCONT')
  await stack?.stop()
  await emulators?.stop()
})

const health = async () => {
  const r = await fetch(`${stack.url}/health`)
  return { status: r.status, text: await r.text() }
}

describe('/health and a DynamoDB Local that stops answering', () => {
  it('answers 503 naming DynamoDB Local while its process is stopped, and 200 once it answers again', async () => {
    expect(await health()).toEqual({ status: 200, text: 'ok' })
    const pid = emulators.dynamodbPid()!
    process.kill(pid, 'SIGSTOP')
    stoppedPid = pid
    const down = await eventually(async () => {
      const h = await health()
      return h.status === 503 ? h.text : undefined
    }, '/health to answer 503', 20_000)
    expect(down).toMatch(new RegExp(`^unavailable\\ndynamodb is down since \\S+: DynamoDB Local \\(pid ${pid}\\) is not answering \\(\\d+ s without an answer\\)`))
    process.kill(pid, 'SIGCONT')
    stoppedPid = undefined
    await eventually(async () => ((await health()).status === 200 ? true : undefined), '/health to answer 200 again', 20_000)
    expect(emulators.dynamodbPid()).toBe(pid) // the same process: it was never restarted
  }, 60_000)
})
