/**
 * The rehearsal's function host: runs each `AWS::Lambda::Function` of a
 * cloud assembly from its bundle (its asset directory), as Lambda runs it:
 * a process of its own per function (a sandbox), started on its first
 * invocation with the environment the template gives it (resolved to the
 * local resources) and the variables Lambda sets, the function's own
 * credentials (so an IAM-enforcing proxy can tell who calls), the SDK's
 * endpoint variables (`AWS_ENDPOINT_URL_<SERVICE>`) pointing at the local
 * emulators, its memory as the heap limit, its timeout enforced (the
 * sandbox is killed and the invocation fails as Lambda reports it). One
 * invocation at a time per sandbox; up to `concurrency` sandboxes per
 * function. Invocations and errors are counted per
 * logical ID.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { resolve as resolvePath } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FunctionInventory } from '../../core/rehearse/inventory'

export interface FunctionCredentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
}

export interface FunctionHostOptions {
  /** The cloud assembly's directory (asset paths are relative to it). */
  readonly assemblyDir: string
  /** The identity each function's SDK calls carry (its role's). */
  readonly credentials: (fn: FunctionInventory) => FunctionCredentials
  /**
   * Endpoints of the local services by the SDK's service identifier
   * (`dynamodb`, `kinesis`, `s3`, `sqs`, `rds_data`, `cloudwatch`, `lambda`…):
   * each becomes `AWS_ENDPOINT_URL_<ID>` in the function's environment.
   */
  readonly endpoints: Readonly<Record<string, string>>
  /** Where the AWS SDK that Lambda's runtime provides is resolved from: a directory with `node_modules/@aws-sdk` (default: this project). */
  readonly sdkFrom?: string
  /** Region of the functions (default us-east-1, the resolver's default). */
  readonly region?: string
  /**
   * Sandboxes per function at most (default 1: its invocations run one after
   * another). Lambda runs concurrent invocations in sandboxes of their own.
   */
  readonly concurrency?: number
  /** Each line a function writes (its log stream). */
  readonly log?: (logicalId: string, line: string) => void
}

export interface FunctionError {
  readonly errorType: string
  readonly errorMessage: string
  readonly stackTrace?: readonly string[]
}

export type Invocation =
  | { readonly ok: true; readonly result: unknown; readonly ms: number }
  | { readonly ok: false; readonly error: FunctionError; readonly ms: number }

export interface FunctionCount {
  readonly logicalId: string
  readonly invocations: number
  /** Function errors (thrown, timed out, crashed, failed to start), HTTP answers with a 5xx status, and batch answers with item failures. */
  readonly errors: number
}

/** Lambda's task root, as the templates' paths name it (`/var/task/...`). */
export const LAMBDA_TASK_ROOT = '/var/task'

const RUNTIME = fileURLToPath(new URL('./function-runtime.mjs', import.meta.url))
const PROJECT_ROOT = fileURLToPath(new URL('../../..', import.meta.url))

/** The SDK's endpoint variable of a service identifier: `rds-data` → `AWS_ENDPOINT_URL_RDS_DATA`. */
export function endpointVariable(service: string): string {
  return `AWS_ENDPOINT_URL_${service.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`
}

/**
 * The environment of a function's process: only what Lambda gives it (no
 * variable of the host leaks in but PATH), the template's variables (a path
 * under Lambda's task root pointing into the bundle), its credentials and
 * the local endpoints.
 */
export function functionEnvironment(fn: FunctionInventory, taskRoot: string, o: Pick<FunctionHostOptions, 'endpoints' | 'region'> & { credentials: FunctionCredentials }): Record<string, string> {
  const region = o.region ?? 'us-east-1'
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(fn.environment)) {
    env[k] = v === LAMBDA_TASK_ROOT || v.startsWith(`${LAMBDA_TASK_ROOT}/`) ? `${taskRoot}${v.slice(LAMBDA_TASK_ROOT.length)}` : v
  }
  for (const [service, url] of Object.entries(o.endpoints)) env[endpointVariable(service)] = url
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    ...env,
    // What Lambda sets (reserved: a template cannot override them)
    _HANDLER: fn.handler ?? 'index.handler',
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime ?? 'nodejs'}`,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(fn.timeoutSeconds),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `rehearsal/${fn.logicalId}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    LAMBDA_TASK_ROOT: taskRoot,
    AWS_ACCESS_KEY_ID: o.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: o.credentials.secretAccessKey,
    ...(o.credentials.sessionToken ? { AWS_SESSION_TOKEN: o.credentials.sessionToken } : {}),
    // No shared configuration of the host's user: the function's identity is the one given.
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    // s3rver does not take the SDK's default streaming checksums.
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  }
}

/** The sandboxes of one function: idle ones, all of them, and invocations waiting for one. */
interface Pool {
  readonly idle: Sandbox[]
  readonly all: Set<Sandbox>
  readonly waiting: (() => void)[]
}

interface Sandbox {
  readonly child: ChildProcess
  readonly ready: Promise<void>
  /** Why it exited, once it has. */
  exited?: string
  /** The last lines it wrote (to explain a crash). */
  readonly tail: string[]
}

/**
 * Whether an invocation's result says it failed although it returned: an
 * HTTP answer with a 5xx status (payload 2.0 or 1.0), or a stream or queue
 * batch answer naming records it could not process (`batchItemFailures`).
 */
export function failedResult(result: unknown): boolean {
  if (result === null || typeof result !== 'object') return false
  const { statusCode, batchItemFailures } = result as { statusCode?: unknown; batchItemFailures?: unknown }
  return (typeof statusCode === 'number' && statusCode >= 500) || (Array.isArray(batchItemFailures) && batchItemFailures.length > 0)
}

export class FunctionHost {
  private readonly byId = new Map<string, FunctionInventory>()
  private readonly pools = new Map<string, Pool>()
  private readonly counts = new Map<string, { invocations: number; errors: number }>()

  constructor(functions: readonly FunctionInventory[], private readonly o: FunctionHostOptions) {
    for (const f of functions) {
      this.byId.set(f.logicalId, f)
      this.counts.set(f.logicalId, { invocations: 0, errors: 0 })
      this.pools.set(f.logicalId, { idle: [], all: new Set(), waiting: [] })
    }
  }

  /** Invokes a function (by logical ID) with an event, in an idle sandbox of it, a new one (up to `concurrency`), or once one is free. */
  invoke(logicalId: string, event: unknown): Promise<Invocation> {
    const fn = this.byId.get(logicalId)
    if (!fn) return Promise.reject(new Error(`no function ${logicalId} in the assembly`))
    return this.invokeNow(fn, event)
  }

  /** `{logicalId, invocations, errors}` of every function. */
  report(): FunctionCount[] {
    return [...this.counts].map(([logicalId, c]) => ({ logicalId, ...c }))
  }

  /** Stops every sandbox. */
  async stop(): Promise<void> {
    await Promise.all([...this.pools.values()].flatMap((p) => [...p.all].map((s) => this.kill(p, s))))
  }

  private async kill(pool: Pool, s: Sandbox): Promise<void> {
    this.drop(pool, s)
    if (s.exited !== undefined) return
    const gone = new Promise<void>((r) => s.child.once('exit', () => r()))
    s.child.kill('SIGKILL')
    await gone
  }

  /** Forgets a sandbox (exited or killed) and lets a waiting invocation start one. */
  private drop(pool: Pool, s: Sandbox): void {
    if (!pool.all.delete(s)) return
    const i = pool.idle.indexOf(s)
    if (i >= 0) pool.idle.splice(i, 1)
    pool.waiting.shift()?.()
  }

  private async acquire(fn: FunctionInventory, pool: Pool): Promise<Sandbox> {
    for (;;) {
      const idle = pool.idle.pop()
      if (idle && idle.exited === undefined) return idle
      if (idle) continue
      if (pool.all.size < Math.max(1, this.o.concurrency ?? 1)) return this.spawn(fn, pool)
      await new Promise<void>((r) => pool.waiting.push(r))
    }
  }

  private release(pool: Pool, s: Sandbox): void {
    if (s.exited !== undefined || !pool.all.has(s)) return
    pool.idle.push(s)
    pool.waiting.shift()?.()
  }

  private spawn(fn: FunctionInventory, pool: Pool): Sandbox {
    if (!fn.assetPath) throw new Error(`${fn.logicalId} has no bundle in the assembly (aws:asset:path)`)
    const taskRoot = resolvePath(this.o.assemblyDir, fn.assetPath)
    const env = functionEnvironment(fn, taskRoot, { endpoints: this.o.endpoints, region: this.o.region, credentials: this.o.credentials(fn) })
    env.FLOE_REHEARSAL_SDK_FROM = this.o.sdkFrom ?? PROJECT_ROOT
    const child = spawn(process.execPath, [`--max-old-space-size=${fn.memoryMb}`, RUNTIME], { cwd: taskRoot, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
    const tail: string[] = []
    const lines = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        tail.push(line)
        if (tail.length > 20) tail.shift()
        this.o.log?.(fn.logicalId, line)
      }
    }
    child.stdout!.on('data', lines)
    child.stderr!.on('data', lines)
    const exit: { reason?: string } = {}
    child.once('exit', (code, signal) => {
      exit.reason = signal ? `signal ${signal}` : `exit status ${code}`
      s.exited = exit.reason
      this.drop(pool, s)
    })
    const s: Sandbox = {
      child,
      tail,
      ready: new Promise<void>((resolve, reject) => {
        const onMessage = (m: { type?: string }) => { if (m?.type === 'ready') { child.off('message', onMessage); resolve() } }
        child.on('message', onMessage)
        child.once('exit', () => reject(new Error(exit.reason)))
      }),
    }
    s.ready.catch(() => {})
    pool.all.add(s)
    return s
  }

  private async invokeNow(fn: FunctionInventory, event: unknown): Promise<Invocation> {
    const count = this.counts.get(fn.logicalId)!
    count.invocations++
    const start = performance.now()
    const requestId = randomUUID()
    const answer = await this.run(fn, event, requestId).catch((err: Error): { error: FunctionError } => ({ error: { errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${requestId} Error: ${err.message}` } }))
    const ms = Math.round(performance.now() - start)
    if ('error' in answer || failedResult(answer.result)) count.errors++
    return 'error' in answer ? { ok: false, error: answer.error, ms } : { ok: true, result: answer.result, ms }
  }

  private async run(fn: FunctionInventory, event: unknown, requestId: string): Promise<{ result: unknown } | { error: FunctionError }> {
    const pool = this.pools.get(fn.logicalId)!
    const s = await this.acquire(fn, pool)
    try {
      await s.ready
    } catch {
      return { error: { errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${requestId} Error: Runtime exited during initialization (${s.exited}): ${s.tail.slice(-3).join(' | ')}` } }
    }
    const timeoutMs = fn.timeoutSeconds * 1000
    const answer = await new Promise<{ result: unknown } | { error: FunctionError }>((resolve) => {
      const id = requestId
      let timer: NodeJS.Timeout | undefined
      const finish = (x: { result: unknown } | { error: FunctionError }) => {
        clearTimeout(timer)
        s.child.off('message', onMessage)
        s.child.off('exit', onExit)
        resolve(x)
      }
      const onMessage = (m: { type?: string; id?: string; result?: unknown; error?: FunctionError }) => {
        if (m?.type !== 'answer' || m.id !== id) return
        finish(m.error ? { error: m.error } : { result: m.result })
      }
      const onExit = () => {
        finish({ error: { errorType: 'Runtime.ExitError', errorMessage: `RequestId: ${id} Error: Runtime exited with error: ${s.exited ?? 'exit'}: ${s.tail.slice(-3).join(' | ')}` } })
      }
      s.child.on('message', onMessage)
      s.child.once('exit', onExit)
      timer = setTimeout(() => {
        // As Lambda: the sandbox is discarded, the next invocation starts a fresh one.
        s.child.off('exit', onExit)
        void this.kill(pool, s)
        finish({ error: { errorType: 'Sandbox.Timedout', errorMessage: `RequestId: ${id} Error: Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds` } })
      }, timeoutMs)
      s.child.send({ type: 'invoke', id, requestId: id, arn: fn.arn, deadline: Date.now() + timeoutMs, event })
    })
    this.release(pool, s)
    return answer
  }
}
