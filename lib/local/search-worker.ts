/**
 * Runs in the search store's worker thread (see `search-server.ts`): PGlite
 * on the data directory and the PostgreSQL wire server in front of it, so
 * neither a slow statement nor the socket's traffic ever holds the main
 * thread. Tells the parent its port and when it has closed (PGlite
 * flushed) after a `close` message, and shows it in shared memory since when
 * PGlite has been running its current message and how long that may last.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { searchBudgetOf } from '../core/search/settings'
import { servePostgres } from './postgres-server'
import { openPglite } from './search-store'

export interface SearchWorkerData {
  readonly dir?: string
  readonly host: string
  readonly port: number
  readonly password: string
  /** `[0]`: when PGlite started the message it is running (epoch ms), 0 when idle; `[1]`: how long that message may run (ms), 0 for the server's limit. */
  readonly busySince: BigInt64Array
  /** How long a search's statement may run past the budget its connection announces (see `searchBudgetOf`). */
  readonly searchGraceMs: number
}

export type SearchWorkerMessage = { t: 'ready'; port: number; url: string } | { t: 'closed' } | { t: 'failed'; message: string }

const data = workerData as SearchWorkerData
const post = (m: SearchWorkerMessage) => parentPort!.postMessage(m)

try {
  const store = await openPglite(data.dir)
  /** Shows the parent since when PGlite runs its current message, and how long that may last (a search's: its budget and the grace). */
  const onBusy = (busy: boolean, application: string | undefined) => {
    const budget = searchBudgetOf(application)
    Atomics.store(data.busySince, 1, busy && budget !== undefined ? BigInt(budget + data.searchGraceMs) : 0n)
    Atomics.store(data.busySince, 0, busy ? BigInt(Date.now()) : 0n)
  }
  const server = await servePostgres(store.pg, { host: data.host, port: data.port, password: data.password, onBusy }).catch(async (err) => {
    await store.close()
    throw err
  })
  parentPort!.on('message', (m: { t: string }) => {
    if (m.t !== 'close') return
    void (async () => {
      await server.close()
      await store.close()
      post({ t: 'closed' })
      parentPort!.close()
    })()
  })
  post({ t: 'ready', port: server.port, url: server.url })
} catch (err) {
  post({ t: 'failed', message: (err as Error).message })
}
