/**
 * A private, throw-away MariaDB server for tests (Debian's `mariadb-server`,
 * which `.ci/run` installs): a new data directory in a temporary folder, the
 * server on a free port of 127.0.0.1 without grant tables (user `root`, no
 * password), ready once it says so and a connection succeeds, and removed
 * with its data when stopped. `mariadbBinaries()` is undefined where MariaDB
 * is not installed, so that tests can skip with a message.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { freePort } from '../../lib/local/emulators'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mysql from 'mysql2/promise'

export interface MariaDb {
  readonly host: string
  readonly port: number
  readonly user: string
  readonly password: string
  /** Runs statements as root (for fixtures). */
  sql(statements: string): Promise<void>
  stop(): Promise<void>
}

const DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin', ...(process.env.PATH ?? '').split(':')]

function find(name: string): string | undefined {
  for (const d of DIRS) if (d && existsSync(join(d, name))) return join(d, name)
  return undefined
}

/** The server and its installer, when installed. */
export function mariadbBinaries(): { server: string; install: string } | undefined {
  const server = find('mariadbd')
  const install = find('mariadb-install-db')
  return server && install ? { server, install } : undefined
}

export const MARIADB_MISSING = "MariaDB is not installed (Debian's mariadb-server: mariadbd and mariadb-install-db); the MySQL tests of the SQL query enrichment are skipped"

/** Resolves when the server says it is ready; rejects with its output when it exits first. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = ''
    const onData = (b: Buffer) => {
      out += b.toString()
      if (out.includes('ready for connections')) {
        child.stderr!.off('data', onData)
        child.off('exit', onExit)
        resolve()
      }
    }
    const onExit = (code: number | null) => reject(new Error(`mariadbd exited (${code}) before it was ready:\n${out.slice(-2000)}`))
    child.stderr!.on('data', onData)
    child.once('exit', onExit)
  })
}

export async function startMariaDb(): Promise<MariaDb> {
  const bin = mariadbBinaries()
  if (!bin) throw new Error(MARIADB_MISSING)
  const dir = mkdtempSync(join(tmpdir(), 'floe-mariadb-'))
  const data = join(dir, 'data')
  const root = process.getuid?.() === 0 ? ['--user=root'] : []
  const inst = spawnSync(bin.install, ['--no-defaults', `--datadir=${data}`, ...root, '--skip-test-db', '--auth-root-authentication-method=normal', '--skip-name-resolve'], { encoding: 'utf8' })
  if (inst.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`mariadb-install-db failed (${inst.status}): ${inst.stderr || inst.stdout}`)
  }
  let child: ChildProcess | undefined
  let port = 0
  let lastError: unknown
  // the port is free when chosen; another process may take it before the server binds it
  for (let attempt = 0; attempt < 3 && !child; attempt++) {
    port = await freePort()
    const c = spawn(bin.server, [
      '--no-defaults', `--datadir=${data}`, `--socket=${join(dir, 'sock')}`, `--pid-file=${join(dir, 'pid')}`, `--port=${port}`, '--bind-address=127.0.0.1',
      ...root, '--skip-grant-tables', '--skip-log-bin', '--skip-name-resolve', '--innodb-buffer-pool-size=16M', '--max-connections=50',
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
    try {
      await ready(c)
      child = c
    } catch (err) {
      lastError = err
    }
  }
  if (!child) {
    rmSync(dir, { recursive: true, force: true })
    throw lastError
  }
  const server = child
  // drain its log so that it never blocks on a full pipe
  server.stderr!.resume()
  const admin = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', password: '', multipleStatements: true })
  return {
    host: '127.0.0.1',
    port,
    user: 'root',
    password: '',
    async sql(statements) {
      await admin.query(statements)
    },
    async stop() {
      await admin.end().catch(() => {})
      if (server.exitCode === null) {
        const exited = new Promise((r) => server.once('exit', r))
        server.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
