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
 *
 * A client signs in as user `postgres` with the server's password (MD5
 * challenge, which `pg`, `psql` and every libpq client answer); anything else
 * is refused (`28P01`) before PGlite sees a byte.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import type { PGlite } from '@electric-sql/pglite'

export interface PostgresServer {
  /** `postgres://postgres:<password>@host:port/postgres` */
  readonly url: string
  readonly port: number
  close(): Promise<void>
}

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
const PROTOCOL_3 = 196608
/** Largest message accepted from a client (PostgreSQL's own limit is 1 GB; the search store's statements are small). */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024

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

export const POSTGRES_USER = 'postgres'

/** A new random password for the server (URL-safe). */
export const newPostgresPassword = () => randomBytes(18).toString('base64url')

export interface ServeOptions {
  /** The password of user `postgres`; required: the server accepts no one without it. */
  readonly password: string
  readonly host?: string
  readonly port?: number
  readonly maxConnections?: number
  /** Told when PGlite starts (true) and ends (false) a message, with the client's `application_name`: a watchdog can see a statement that never ends. */
  readonly onBusy?: (busy: boolean, application: string | undefined) => void
}

const md5 = (s: string | Buffer) => createHash('md5').update(s).digest('hex')

/** The password message an MD5-authenticating client sends: `md5` + md5(md5(password + user) + salt). */
export function md5Answer(password: string, user: string, salt: Buffer): string {
  return `md5${md5(Buffer.concat([Buffer.from(md5(password + user)), salt]))}`
}

/** The parameters (`user`, `database`, …) of a protocol-3 startup message. */
function startupParams(msg: Buffer): Record<string, string> {
  const parts = msg.subarray(8).toString('utf8').split('\0')
  const out: Record<string, string> = {}
  for (let i = 0; i + 1 < parts.length && parts[i] !== ''; i += 2) out[parts[i]!] = parts[i + 1]!
  return out
}

export async function servePostgres(db: PGlite, opts: ServeOptions): Promise<PostgresServer> {
  if (!opts.password) throw new Error('servePostgres needs a password')
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
    /** The startup message and salt while the password is awaited. */
    let signingIn: { startup: Buffer; user: string; salt: Buffer } | undefined
    /** The client's `application_name`, from its startup message. */
    let application: string | undefined
    let chain = Promise.resolve()
    let closed = false

    const handle = async (message: Buffer, endsExchange: boolean) => {
      await lock.acquire(id)
      if (closed) return void lock.release(id)
      opts.onBusy?.(true, application)
      try {
        await db.execProtocolRawStream(new Uint8Array(message), {
          onRawData: (d) => {
            if (!socket.destroyed) socket.write(Buffer.from(d))
          },
        })
      } catch (err) {
        if (!socket.destroyed) socket.write(errorResponse('XX000', (err as Error).message))
      }
      opts.onBusy?.(false, application)
      if (endsExchange && (db.closed || !db.isInTransaction())) lock.release(id)
    }

    const take = () => {
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return
          const len = buffer.readInt32BE(0)
          const code = buffer.readInt32BE(4)
          if (len < 8 || len > 10_000) {
            socket.end(errorResponse('08P01', `invalid startup packet length ${len}`))
            return
          }
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
          const salt = randomBytes(4)
          const params = startupParams(msg)
          application = params.application_name
          signingIn = { startup: Buffer.from(msg), user: params.user ?? '', salt }
          const challenge = Buffer.alloc(13)
          challenge.write('R', 0)
          challenge.writeInt32BE(12, 1)
          challenge.writeInt32BE(5, 5) // AuthenticationMD5Password
          salt.copy(challenge, 9)
          socket.write(challenge)
          continue
        }
        if (buffer.length < 5) return
        const len = 1 + buffer.readInt32BE(1)
        if (len < 5 || len > MAX_MESSAGE_BYTES) {
          socket.end(errorResponse('08P01', `invalid message length ${len - 1}`))
          return
        }
        if (buffer.length < len) return
        const type = String.fromCharCode(buffer[0]!)
        const copy = Buffer.from(buffer.subarray(0, len))
        buffer = buffer.subarray(len)
        if (signingIn) {
          const s = signingIn
          const given = type === 'p' ? copy.subarray(5, copy.indexOf(0, 5) < 0 ? len : copy.indexOf(0, 5)) : Buffer.alloc(0)
          const expected = Buffer.from(md5Answer(opts.password, POSTGRES_USER, s.salt))
          if (s.user !== POSTGRES_USER || given.length !== expected.length || !timingSafeEqual(given, expected)) {
            socket.end(errorResponse('28P01', `password authentication failed for user "${s.user}"`))
            return
          }
          signingIn = undefined
          chain = chain.then(() => handle(s.startup, true))
          continue
        }
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
    url: `postgres://${POSTGRES_USER}:${encodeURIComponent(opts.password)}@${host}:${port}/postgres`,
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
