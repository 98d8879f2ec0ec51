/**
 * PGlite served over PostgreSQL's wire protocol on a local port, so the
 * functions reach the local search store with the same driver (`pg`) and
 * statements as any PostgreSQL, and several processes (the stack, tests,
 * `psql`) can share one store.
 *
 * PGlite is a single backend session. Each client connection takes the
 * session from its first message until the end of its exchange: a `Sync` or
 * a simple query after which no transaction is open. So the extended
 * protocol's Parse/Bind/Execute of two connections never interleave, and a
 * transaction is never shared. A connection that closes mid-transaction has
 * it rolled back.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net'
import type { PGlite } from '@electric-sql/pglite'

export interface PostgresServer {
  /** `postgres://postgres@host:port/postgres` */
  readonly url: string
  readonly port: number
  close(): Promise<void>
}

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
const PROTOCOL_3 = 196608

/** A FIFO lock over the one session. */
class SessionLock {
  private holder: number | null = null
  private readonly waiting: { id: number; go: () => void }[] = []

  async acquire(id: number): Promise<void> {
    if (this.holder === id) return
    if (this.holder === null) {
      this.holder = id
      return
    }
    await new Promise<void>((go) => this.waiting.push({ id, go }))
  }

  release(id: number): void {
    if (this.holder !== id) return
    const next = this.waiting.shift()
    this.holder = next?.id ?? null
    next?.go()
  }

  /** Drops a closed connection's place in the queue. */
  forget(id: number): void {
    const i = this.waiting.findIndex((w) => w.id === id)
    if (i >= 0) this.waiting.splice(i, 1)
  }

  isHeldBy(id: number): boolean {
    return this.holder === id
  }
}

export async function servePostgres(db: PGlite, opts: { host?: string; port?: number; maxConnections?: number } = {}): Promise<PostgresServer> {
  const host = opts.host ?? '127.0.0.1'
  const max = opts.maxConnections ?? 32
  const lock = new SessionLock()
  const sockets = new Set<Socket>()
  let nextId = 0

  const serve = (socket: Socket) => {
    if (sockets.size >= max) {
      socket.end(errorResponse('53300', `too many connections (the local search store accepts ${max})`))
      return
    }
    sockets.add(socket)
    socket.setNoDelay(true)
    const id = ++nextId
    let buffer: Buffer = Buffer.alloc(0)
    let started = false
    let chain = Promise.resolve()
    let closed = false

    const handle = async (message: Buffer, endsExchange: boolean) => {
      await lock.acquire(id)
      if (closed) return void lock.release(id)
      try {
        await db.execProtocolRawStream(new Uint8Array(message), {
          onRawData: (d) => {
            if (!socket.destroyed) socket.write(Buffer.from(d))
          },
        })
      } catch (err) {
        if (!socket.destroyed) socket.write(errorResponse('XX000', (err as Error).message))
      }
      if (endsExchange && (db.closed || !db.isInTransaction())) lock.release(id)
    }

    const take = () => {
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return
          const len = buffer.readInt32BE(0)
          const code = buffer.readInt32BE(4)
          if (buffer.length < len) return
          const msg = buffer.subarray(0, len)
          buffer = buffer.subarray(len)
          if (code === SSL_REQUEST || code === GSS_REQUEST) {
            socket.write('N')
            continue
          }
          if (code === CANCEL_REQUEST) continue
          if (code !== PROTOCOL_3) {
            socket.end(errorResponse('08P01', `unsupported frontend protocol ${code >> 16}.${code & 0xffff}`))
            return
          }
          started = true
          const copy = Buffer.from(msg)
          chain = chain.then(() => handle(copy, true))
          continue
        }
        if (buffer.length < 5) return
        const len = 1 + buffer.readInt32BE(1)
        if (buffer.length < len) return
        const type = String.fromCharCode(buffer[0]!)
        const copy = Buffer.from(buffer.subarray(0, len))
        buffer = buffer.subarray(len)
        if (type === 'X') {
          socket.end()
          return
        }
        chain = chain.then(() => handle(copy, type === 'S' || type === 'Q'))
      }
    }

    socket.on('data', (d: Buffer) => {
      buffer = buffer.length ? Buffer.concat([buffer, d]) : d
      take()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      closed = true
      sockets.delete(socket)
      lock.forget(id)
      chain = chain.then(async () => {
        if (lock.isHeldBy(id)) {
          if (!db.closed && db.isInTransaction()) await db.exec('ROLLBACK').catch(() => {})
          lock.release(id)
        }
      })
    })
  }

  const server = createServer(serve)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `postgres://postgres@${host}:${port}/postgres`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** A PostgreSQL ErrorResponse message. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat([Buffer.from(`SERROR\0C${code}\0M${message}\0`), Buffer.from([0])])
  const head = Buffer.alloc(5)
  head.write('E', 0)
  head.writeInt32BE(4 + fields.length, 1)
  return Buffer.concat([head, fields])
}
