/**
 * A function run in a worker thread of the local stack instead of on the
 * gateway's event loop. Enrich runs user code (JavaScript enrichments, each
 * event bounded at 100 ms) and CPU-bound work on every event: in the
 * gateway's thread, a script that loops forever held every HTTP request for
 * seconds. In its own thread it cannot: the gateway answers whatever enrich
 * does.
 *
 * The stream trigger stays in the gateway's thread (checkpoints, batching,
 * retries, bisect, the failure location) and calls `invoke`, which sends the
 * batch to the worker and answers the handler's response (`batchItemFailures`)
 * or its error, so the trigger's semantics are those of an in-process
 * function. The handler writes its outputs itself, with the SDK, as on
 * Lambda. As Lambda does, an invocation that runs past the function's timeout
 * is a timeout error, and the worker is ended and started afresh (a cold
 * start); a worker that dies fails the invocations it had in flight: the
 * trigger retries them from its checkpoint, so nothing is lost.
 *
 * The parent's notices (restarts, registry changes) go to the worker on the
 * same channel, ahead of the next batch; what the handler writes with
 * `console.*` or to stdout comes back and goes to the function's log.
 * Invocations are counted in the metrics here, as in-process ones are.
 *
 * `/micro/validate` (`microValidate`) runs enrich on the events of an HTTP
 * request: the gateway invokes it in a worker thread of its own for the same
 * reason.
 */
import { EventEmitter } from 'node:events'
import { SHARE_ENV, Worker } from 'node:worker_threads'
import { functions, type FunctionKey } from '../infra/functions'
import { forwardNotices, type Notice } from '../runtime/notices'
import { InvocationTimeoutError } from './handlers'
import { runAsFunction } from './logs'
import { measureInvocation } from './metrics'

/** The functions the local stack runs in a worker thread. */
export const WORKER_FUNCTIONS: ReadonlySet<FunctionKey> = new Set<FunctionKey>(['enrich', 'microValidate'])

export type LogMethod = 'debug' | 'log' | 'info' | 'warn' | 'error' | 'stdout'

/** Messages to the worker. */
export type ToWorker = { t: 'invoke'; id: number; event: unknown; timeoutSeconds: number } | { t: 'notice'; notice: Notice }

/** Messages from the worker. */
export type ToParent =
  | { t: 'started'; id: number }
  | { t: 'done'; id: number; result: unknown }
  | { t: 'failed'; id: number; error: { name: string; message: string; stack?: string } }
  | { t: 'log'; method: LogMethod; text: string }

const WORKER = new URL('./function-worker-thread.mjs', import.meta.url)

/** The error of an invocation the worker ended without an answer (it died, or was ended). */
export class WorkerEndedError extends Error {
  override readonly name = 'WorkerEndedError'
}

export interface FunctionWorkerOptions {
  /** The stack's own lines (floe.log): a worker ended, an invocation timed out. */
  readonly log?: (line: string) => void
  /** The invocation timeout; default the function's declared `timeoutSeconds`. */
  readonly timeoutSeconds?: number
}

interface Pending {
  /** The thread it was sent to. */
  readonly worker: Worker
  resolve(v: unknown): void
  reject(e: Error): void
}

/**
 * One function's worker thread, started at the first invocation and again
 * after it ended. Emits `started` and `ended` (with the invocation's number)
 * as the worker begins and finishes an invocation.
 */
export class FunctionWorker extends EventEmitter {
  private worker: Worker | undefined
  private readonly pending = new Map<number, Pending>()
  private next = 0
  private starts = 0
  private stopped = false
  private readonly unforward: () => void
  private readonly log: (line: string) => void

  constructor(readonly key: FunctionKey, private readonly opts: FunctionWorkerOptions = {}) {
    super()
    this.log = opts.log ?? (() => {})
    this.unforward = forwardNotices((notice) => this.worker?.postMessage({ t: 'notice', notice } satisfies ToWorker))
  }

  /** How many worker threads were started (1 + restarts). */
  get threadsStarted(): number {
    return this.starts
  }

  /** Starts the thread now (it loads the handler module), so that the first batch does not wait for it. */
  start(): void {
    if (!this.stopped) this.thread()
  }

  /** Invokes the handler in the worker with the function's timeout, counted in the metrics as an in-process invocation is. */
  invoke(event: unknown): Promise<unknown> {
    const timeoutSeconds = this.opts.timeoutSeconds ?? (functions[this.key] as { timeoutSeconds?: number }).timeoutSeconds ?? 30
    return measureInvocation(this.key, event, () => this.send(event, timeoutSeconds))
  }

  private send(event: unknown, timeoutSeconds: number): Promise<unknown> {
    if (this.stopped) return Promise.reject(new WorkerEndedError(`${this.key}'s worker is stopped`))
    const w = this.thread()
    const id = ++this.next
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        this.emit('ended', id)
        reject(new InvocationTimeoutError(`Task timed out after ${timeoutSeconds} seconds`))
        // As on Lambda, the instance that timed out is not used again.
        this.end(w, `${this.key}: an invocation ran past its timeout of ${timeoutSeconds} s; its worker thread is ended and started afresh`)
      }, timeoutSeconds * 1000)
      this.pending.set(id, {
        worker: w,
        resolve: (v) => {
          clearTimeout(timer)
          resolve(v)
        },
        reject: (e) => {
          clearTimeout(timer)
          reject(e)
        },
      })
      w.postMessage({ t: 'invoke', id, event, timeoutSeconds } satisfies ToWorker)
    })
  }

  /** The running worker, or a new one. */
  private thread(): Worker {
    if (this.worker) return this.worker
    const w = new Worker(WORKER, { workerData: { key: this.key }, env: SHARE_ENV })
    this.starts++
    this.worker = w
    w.on('message', (m: ToParent) => this.receive(m))
    w.on('error', (err) => this.log(`${this.key}: its worker thread failed: ${err.stack ?? err.message}`))
    w.once('exit', (code) => {
      if (this.worker === w) this.worker = undefined
      const lost = [...this.pending].filter(([, p]) => p.worker === w)
      for (const [id] of lost) this.pending.delete(id)
      if (lost.length > 0 && !this.stopped) this.log(`${this.key}: its worker thread ended (exit code ${code}) with ${lost.length} invocation(s) in flight; they fail and are retried`)
      for (const [id, p] of lost) {
        this.emit('ended', id)
        p.reject(new WorkerEndedError(`${this.key}'s worker thread ended (exit code ${code}) before the invocation answered`))
      }
    })
    return w
  }

  private receive(m: ToParent): void {
    switch (m.t) {
      case 'log':
        // Into the function's log, as its own output would go in this thread.
        runAsFunction(this.key, () => (m.method === 'stdout' ? process.stdout.write(m.text) : console[m.method](m.text)))
        return
      case 'started':
        this.emit('started', m.id)
        return
      case 'done':
      case 'failed': {
        // an invocation that timed out is answered already
        const p = this.pending.get(m.id)
        if (!p) return
        this.pending.delete(m.id)
        this.emit('ended', m.id)
        if (m.t === 'done') return p.resolve(m.result)
        const err = new Error(m.error.message)
        // the name crosses the thread: a set-up failure is still one (isSetupError)
        err.name = m.error.name
        if (m.error.stack) err.stack = m.error.stack
        p.reject(err)
      }
    }
  }

  private end(w: Worker, reason: string): void {
    if (this.worker !== w) return
    this.log(reason)
    // the next invocation starts a new thread at once; this one's other invocations fail when it has exited
    this.worker = undefined
    void w.terminate()
  }

  /** Ends the worker thread now, as a crash would: its invocations in flight fail; the next one starts a new thread. */
  async terminate(): Promise<void> {
    const w = this.worker
    this.worker = undefined
    await w?.terminate()
  }

  /** Ends the worker for good (the stack stops; the triggers have finished their invocations). */
  async stop(): Promise<void> {
    this.stopped = true
    this.unforward()
    await this.worker?.terminate()
  }
}
