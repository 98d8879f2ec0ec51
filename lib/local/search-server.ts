/**
 * The local search store's server: PGlite and its PostgreSQL wire server run
 * in a worker thread (`search-worker.ts`), so the gateway's event loop never
 * waits for a statement; this process, like any other client, reaches the
 * store over TCP with the password.
 *
 * PGlite cannot be interrupted in the middle of a statement: it ignores
 * `statement_timeout` (its timer needs the worker's event loop, which the
 * statement holds), and while a statement runs the WebAssembly calls no
 * JavaScript at all (measured: a 1 s scan of 600 bad rows with 50 wildcard
 * terms makes no call between its planning and its result), so nothing in
 * the worker can even notice a deadline. A statement that runs longer than
 * its limit therefore ends the worker: it is started again on the same port
 * and data (PostgreSQL's crash recovery, as after a kill), the statement's
 * client gets a broken connection, and the statements queued behind it run
 * again. A search's statement (its connection's `application_name`
 * announces its budget) may run `searchGraceMs` past that budget: its request
 * was answered 504, and it would otherwise hold the store, and every write
 * queued behind it, for up to `statementLimitMs`. Any other statement (the
 * loader's writes, a vacuum) has `statementLimitMs`. The loader's writes
 * survive a restart: they fail whole and are retried (see
 * `functions/search-loader`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { SearchWorkerData, SearchWorkerMessage } from './search-worker'

export interface SearchServer {
  /** `postgres://postgres:<password>@host:port/postgres` */
  readonly url: string
  readonly port: number
  /** How many times the worker was ended (a statement over the limit, or a crash) and started again. */
  restarts(): number
  /** Stops the worker after PGlite has closed (flushed its data). */
  close(): Promise<void>
}

export interface SearchServerOptions {
  /** The data directory (`search/` of `FLOE_DATA_DIR`); a temporary one, removed on close, when omitted. */
  readonly dir?: string
  readonly host?: string
  readonly password: string
  /** The longest one statement may run before the worker is ended and started again (default 60 s). */
  readonly statementLimitMs?: number
  /** How long a search's statement may run past its announced budget (default 2 s). */
  readonly searchGraceMs?: number
  /** The port (default: any free one); the worker keeps it across restarts. */
  readonly port?: number
  readonly log?: (line: string) => void
}

/** Default longest statement of the local store: far above any search's own budget, and above a vacuum of a large table. */
export const DEFAULT_STATEMENT_LIMIT_MS = 60_000
/** Default time a search's statement may run past its budget before the store ends it. */
export const DEFAULT_SEARCH_GRACE_MS = 2_000

const WORKER = new URL('./search-worker.mjs', import.meta.url)

export async function startSearchServer(opts: SearchServerOptions): Promise<SearchServer> {
  const host = opts.host ?? '127.0.0.1'
  const limit = opts.statementLimitMs ?? DEFAULT_STATEMENT_LIMIT_MS
  const log = opts.log ?? (() => {})
  const temporary = opts.dir === undefined
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'floe-search-'))
  const busySince = new BigInt64Array(new SharedArrayBuffer(16))
  const searchGraceMs = opts.searchGraceMs ?? DEFAULT_SEARCH_GRACE_MS
  let worker: Worker
  let restarts = 0
  let stopping = false
  let restarting: Promise<void> | undefined

  const spawn = (port: number) =>
    new Promise<{ worker: Worker; port: number; url: string }>((resolve, reject) => {
      Atomics.store(busySince, 0, 0n)
      Atomics.store(busySince, 1, 0n)
      const data: SearchWorkerData = { dir, host, port, password: opts.password, busySince, searchGraceMs }
      const w = new Worker(WORKER, { workerData: data })
      const failed = (err: Error) => reject(err)
      w.once('error', failed)
      w.once('exit', (code) => reject(new Error(`the search store's worker exited with code ${code} while starting`)))
      w.on('message', (m: SearchWorkerMessage) => {
        if (m.t === 'ready') {
          w.removeAllListeners('exit')
          w.off('error', failed)
          resolve({ worker: w, port: m.port, url: m.url })
        } else if (m.t === 'failed') reject(new Error(`the search store did not start: ${m.message}`))
      })
    })

  const restart = (reason: string) => {
    if (stopping || restarting) return
    log(reason)
    restarts++
    const old = worker
    restarting = (async () => {
      old.removeAllListeners('exit')
      await old.terminate()
      for (let attempt = 0; !stopping; attempt++) {
        try {
          const s = await spawn(first.port)
          watch(s.worker)
          if (stopping) await s.worker.terminate()
          log(`search store: started again on port ${first.port}`)
          return
        } catch (err) {
          log(`search store: did not start again: ${(err as Error).message}; trying again`)
          await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 5_000)))
        }
      }
    })().finally(() => (restarting = undefined))
  }

  const watch = (w: Worker) => {
    worker = w
    w.on('error', (err) => log(`search store: ${err.message}`))
    w.once('exit', (code) => restart(`search store: its worker exited with code ${code}; starting it again on the same data`))
  }

  const first = await spawn(opts.port ?? 0)
  watch(first.worker)
  const timer = setInterval(
    () => {
      const since = Number(Atomics.load(busySince, 0))
      const own = Number(Atomics.load(busySince, 1))
      const allowed = own > 0 ? Math.min(own, limit) : limit
      if (since > 0 && Date.now() - since > allowed) {
        restart(
          own > 0
            ? `search store: a search ran ${searchGraceMs} ms past its budget of ${own - searchGraceMs} ms (it was answered 504); ending it (PGlite cannot cancel a statement) and starting the store again on the same data`
            : `search store: a statement ran longer than ${limit} ms; ending it (PGlite cannot cancel one) and starting the store again on the same data`,
        )
      }
    },
    Math.max(10, Math.min(250, limit / 4)),
  )
  timer.unref()

  return {
    url: first.url,
    port: first.port,
    restarts: () => restarts,
    async close() {
      stopping = true
      clearInterval(timer)
      await restarting
      const w = worker
      w.removeAllListeners('exit')
      const closed = new Promise<void>((resolve) => {
        w.on('message', (m: SearchWorkerMessage) => m.t === 'closed' && resolve())
        w.once('exit', () => resolve())
      })
      w.postMessage({ t: 'close' })
      // a statement still running keeps the worker from closing: it is ended after the limit, as the watchdog would
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, limit).unref())
      await Promise.race([closed, timeout])
      await w.terminate()
      if (temporary) rmSync(dir, { recursive: true, force: true })
    },
  }
}
