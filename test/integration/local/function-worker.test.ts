/**
 * A function's worker thread behaves as a Lambda instance: an invocation that
 * runs past the function's timeout fails as a timeout, its thread is ended,
 * and the next invocation gets a new one (a cold start). Here enrich hangs on
 * an S3 endpoint that accepts connections and never answers.
 */
import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOCAL_ENDPOINTS_ENV } from '../../../lib/aws/clients'
import { enrichmentFiles } from '../../../lib/infra/enrichments'
import { functions } from '../../../lib/infra/functions'
import { envVar } from '../../../lib/infra/resources'
import { FunctionWorker } from '../../../lib/local/function-worker'
import { InvocationTimeoutError } from '../../../lib/local/handlers'

const sockets: Socket[] = []
const silent = createServer((s) => void sockets.push(s))
const saved = { ...process.env }

beforeAll(async () => {
  silent.listen(0, '127.0.0.1')
  await once(silent, 'listening')
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
  // the worker shares this environment (as in-process functions do)
  Object.assign(process.env, { ACCEPT_LIMITED_USE_LICENSE: 'yes' })
  // enrich's own environment, as the stack sets it (its configuration)
  Object.assign(process.env, (functions.enrich as { environment?: Record<string, string> }).environment, {
    [LOCAL_ENDPOINTS_ENV]: JSON.stringify({ dynamodb: url, kinesis: url, s3: url }),
    [envVar('bucket', enrichmentFiles.bucket)]: 'assets',
    ACCEPT_LIMITED_USE_LICENSE: 'yes',
    AWS_REGION: 'us-east-1',
  })
})

afterAll(async () => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
  Object.assign(process.env, saved)
  for (const s of sockets) s.destroy()
  silent.close()
})

describe('a function worker', () => {
  it('fails an invocation that runs past the timeout, ends its thread and starts a new one for the next invocation', async () => {
    const lines: string[] = []
    const w = new FunctionWorker('enrich', { timeoutSeconds: 2, log: (l) => lines.push(l) })
    try {
      const first = w.invoke({ Records: [] })
      await expect(first).rejects.toThrow(InvocationTimeoutError)
      await expect(first).rejects.toThrow('Task timed out after 2 seconds')
      expect(lines).toContain('enrich: an invocation ran past its timeout of 2 s; its worker thread is ended and started afresh')
      await expect(w.invoke({ Records: [] })).rejects.toThrow(InvocationTimeoutError)
      expect(w.threadsStarted).toBe(2)
    } finally {
      await w.stop()
    }
  })
})
