/**
 * Runs in a function's worker thread (see `function-worker.ts`): loads the
 * function's handler (the module the CDK app bundles) and runs the
 * invocations the parent sends, one message each way per invocation. What
 * the handler writes with `console.*` or to stdout is sent to the parent,
 * which writes it to the function's log as if it ran there; notices (a
 * restart, a registry change) are delivered here as the parent announced
 * them.
 */
import { format } from 'node:util'
import { parentPort, workerData } from 'node:worker_threads'
import type { FunctionKey } from '../infra/functions'
import { deliver } from '../runtime/notices'
import { lambdaContext, loadHandler } from './handlers'
import type { ToParent, ToWorker } from './function-worker'

const { key } = workerData as { key: FunctionKey }
const port = parentPort!
const post = (m: ToParent) => port.postMessage(m)

const target = console as unknown as Record<string, (...args: unknown[]) => void>
for (const method of ['debug', 'log', 'info', 'warn', 'error'] as const) {
  target[method] = (...args: unknown[]) => post({ t: 'log', method, text: format(...args) })
}
process.stdout.write = function (chunk: unknown, ...rest: unknown[]) {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')
  post({ t: 'log', method: 'stdout', text })
  const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined
  done?.()
  return true
} as typeof process.stdout.write

const handler = loadHandler(key)
handler.catch(() => {}) // reported to each invocation

port.on('message', (m: ToWorker) => {
  if (m.t === 'notice') return deliver(m.notice)
  void (async () => {
    post({ t: 'started', id: m.id })
    try {
      const result = await (await handler)(m.event, lambdaContext(key, m.timeoutSeconds))
      post({ t: 'done', id: m.id, result })
    } catch (err) {
      const e = err as Error | undefined
      post({ t: 'failed', id: m.id, error: { name: e?.name ?? 'Error', message: e?.message ?? String(err), stack: e?.stack } })
    }
  })()
})
