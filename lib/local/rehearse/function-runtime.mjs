// The runtime of one hosted function, in a process of its own (as a Lambda
// sandbox): loads the handler `_HANDLER` from `LAMBDA_TASK_ROOT`, then runs
// one invocation at a time sent by the host over IPC, with a Lambda context,
// and answers the result or the error as Lambda reports it.
import { existsSync } from 'node:fs'
import { register } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const root = process.env.LAMBDA_TASK_ROOT ?? process.cwd()
const spec = process.env._HANDLER ?? ''
// The AWS SDK is the runtime's, not the bundle's (bundles leave @aws-sdk/* out): resolved from the host's node_modules.
if (process.env.FLOE_REHEARSAL_SDK_FROM) register(new URL('./sdk-hooks.mjs', import.meta.url), { data: { from: process.env.FLOE_REHEARSAL_SDK_FROM } })
delete process.env.FLOE_REHEARSAL_SDK_FROM

const describe = (err, type) => ({
  errorType: type ?? (err && typeof err === 'object' && typeof err.name === 'string' ? err.name : 'Error'),
  errorMessage: err && typeof err === 'object' && 'message' in err ? String(err.message) : String(err),
  ...(err && typeof err.stack === 'string' ? { stackTrace: err.stack.split('\n').slice(1).map((l) => l.trim()) } : {}),
})

let handler
let initError
const dot = spec.lastIndexOf('.')
if (dot <= 0) initError = { errorType: 'Runtime.MalformedHandlerName', errorMessage: `Bad handler ${spec}: not file.function` }
else {
  const file = spec.slice(0, dot)
  const name = spec.slice(dot + 1)
  const path = ['.mjs', '.js', '.cjs'].map((e) => join(root, file + e)).find((p) => existsSync(p))
  if (!path) initError = { errorType: 'Runtime.ImportModuleError', errorMessage: `Error: Cannot find module '${file}'` }
  else {
    try {
      const mod = await import(pathToFileURL(path).href)
      handler = mod[name] ?? mod.default?.[name]
      if (typeof handler !== 'function') initError = { errorType: 'Runtime.HandlerNotFound', errorMessage: `${spec} is undefined or not exported` }
    } catch (err) {
      initError = describe(err)
    }
  }
}

function run(event, context) {
  if (handler.length < 3) return Promise.resolve().then(() => handler(event, context))
  // A callback-style handler.
  return new Promise((resolve, reject) => {
    const done = (err, value) => (err ? reject(err) : resolve(value))
    const r = handler(event, context, done)
    if (r && typeof r.then === 'function') r.then(resolve, reject)
  })
}

process.on('message', async (m) => {
  if (m?.type !== 'invoke') return
  if (initError) return process.send({ type: 'answer', id: m.id, error: initError })
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: m.arn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: m.requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, m.deadline - Date.now()),
    done() {}, succeed() {}, fail() {},
  }
  try {
    const result = await run(m.event, context)
    process.send({ type: 'answer', id: m.id, result: result === undefined ? null : result })
  } catch (err) {
    process.send({ type: 'answer', id: m.id, error: describe(err) })
  }
})
process.send({ type: 'ready' })
