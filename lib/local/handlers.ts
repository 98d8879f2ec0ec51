import { dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { functions, type FunctionKey } from '../infra/functions'
import { runAsFunction } from './logs'
import { measureInvocation } from './metrics'

/** The project root (where package.json lives). */
export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

export type LambdaHandler = (event: any, context: any) => Promise<any>

const cache = new Map<string, Promise<LambdaHandler>>()

/** Loads the `handler` export of a declared function: the same module the CDK app bundles. */
export function loadHandler(key: FunctionKey): Promise<LambdaHandler> {
  let p = cache.get(key)
  if (!p) {
    const entry = resolve(projectRoot, functions[key].entry)
    p = import(pathToFileURL(entry).href).then((m: { handler?: LambdaHandler }) => {
      if (typeof m.handler !== 'function') throw new Error(`${functions[key].entry} does not export a function named handler`)
      return m.handler
    })
    cache.set(key, p)
  }
  return p
}

let invocation = 0

/** A Lambda context object good enough for handlers and middy. */
export function lambdaContext(name: string, timeoutSeconds: number) {
  const deadline = Date.now() + timeoutSeconds * 1000
  const id = `local-${process.pid}-${++invocation}`
  return {
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    memoryLimitInMB: '128',
    awsRequestId: id,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  }
}

/** Thrown when an invocation runs past the function's timeout. */
export class InvocationTimeoutError extends Error {
  override readonly name = 'InvocationTimeoutError'
}

const invokedListeners = new Set<(key: FunctionKey) => void>()

/** Calls `fn` with the function's name after each invocation through `invoke` that returned (its writes are done); returns the unsubscribe. */
export function onInvoked(fn: (key: FunctionKey) => void): () => void {
  invokedListeners.add(fn)
  return () => invokedListeners.delete(fn)
}

/** Tells the `onInvoked` listeners that an invocation of `key` returned. */
export function invoked(key: FunctionKey): void {
  for (const l of invokedListeners) l(key)
}

/** Invokes a declared function's handler with its timeout, as Lambda would. */
export async function invoke(key: FunctionKey, event: unknown): Promise<unknown> {
  const decl = functions[key] as { timeoutSeconds?: number }
  const timeoutSeconds = decl.timeoutSeconds ?? 30
  const handler = await loadHandler(key)
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InvocationTimeoutError(`Task timed out after ${timeoutSeconds} seconds`)), timeoutSeconds * 1000)
  })
  try {
    // Counted in the metrics; what the handler writes with console.* goes to its log.
    const out = await measureInvocation(key, event, () => runAsFunction(key, () => Promise.race([handler(event, lambdaContext(key, timeoutSeconds)), timeout])))
    invoked(key)
    return out
  } finally {
    clearTimeout(timer)
  }
}
