import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { emulatorHostFor, type EndpointsFile } from '../../../lib/local/cli-start'
import { compiledLauncher, unsafeDirProblem } from '../../../lib/local/dynamodb/launcher'
import { dynamoDbLocalDir, javaCommand } from '../../../lib/local/emulators'
import { floe, killOrphanDynamo, runFloe, type Running } from '../../support/process'
import { TEST_CREDENTIALS } from '../../support/stack'

const dataDir = mkdtempSync(join(tmpdir(), 'floe-listen-'))
const started: Running[] = []

afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL')
  killOrphanDynamo(dataDir)
  rmSync(dataDir, { recursive: true, force: true })
})

/** Connects to host:port: 'connected', or the error code. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port })
    socket.setTimeout(5000, () => {
      socket.destroy()
      resolve('timeout')
    })
    socket.once('connect', () => {
      socket.destroy()
      resolve('connected')
    })
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
  })
}

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8)

describe('floe start', () => {
  it('listens on FLOE_HOST only, and keeps its data directory to its user', async () => {
    // A data directory left open by an older version, with an endpoints file anyone could read.
    chmodSync(dataDir, 0o755)
    writeFileSync(join(dataDir, 'endpoints.json'), '{}', { mode: 0o644 })
    mkdirSync(join(dataDir, 'logs'), { mode: 0o755 })
    writeFileSync(join(dataDir, 'logs', 'floe.log'), '', { mode: 0o644 })
    writeFileSync(join(dataDir, 'logs', 'floe.log.1'), '', { mode: 0o644 })
    mkdirSync(join(dataDir, 'dynamodb'), { mode: 0o755 })
    writeFileSync(join(dataDir, 'dynamodb', 'old.db'), '', { mode: 0o644 })
    const proc = floe(['start'], { FLOE_DATA_DIR: dataDir, PORT: '0', FLOE_HOST: '127.0.0.1', FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password })
    started.push(proc)
    await proc.waitFor('Floe is up')

    const ep = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as EndpointsFile & { postgres?: string }
    const urls = Object.entries(ep).filter((e): e is [string, string] => typeof e[1] === 'string' && /^[a-z]+:\/\//.test(e[1]))
    expect(urls.map(([k]) => k).sort()).toEqual(['dynamodb', 'http', 'kinesis', 'postgres', 's3'])
    for (const [name, url] of urls) {
      const port = Number(new URL(url).port)
      expect({ name, result: await tryConnect('127.0.0.1', port) }).toEqual({ name, result: 'connected' })
      // 127.0.0.2 is another address of this machine: it stands in for the network.
      expect({ name, result: await tryConnect('127.0.0.2', port) }).toEqual({ name, result: 'ECONNREFUSED' })
    }

    expect(proc.output()).toContain(`${dataDir} was readable by other users (mode 0755); its mode is now 0700`)
    expect(mode(dataDir)).toBe('700')
    expect(mode(join(dataDir, 'endpoints.json'))).toBe('600')
    expect(mode(join(dataDir, 'floe.pid'))).toBe('600')
    expect(mode(join(dataDir, 'logs'))).toBe('700')
    expect(mode(join(dataDir, 'logs', 'floe.log'))).toBe('600')
    expect(mode(join(dataDir, 'logs', 'floe.log.1'))).toBe('600')
    // DynamoDB Local's database holds the token signing secret and the pages' credentials.
    const dbFiles = readdirSync(join(dataDir, 'dynamodb'))
    expect(dbFiles.length).toBeGreaterThan(1)
    for (const f of dbFiles) expect({ f, mode: mode(join(dataDir, 'dynamodb', f)) }).toEqual({ f, mode: '600' })
    for (const d of ['dynamodb', 'kinesis', 's3']) expect({ d, mode: mode(join(dataDir, d)) }).toEqual({ d, mode: '700' })

    proc.child.kill('SIGTERM')
    expect(await proc.exited).toBe(0)
  }, 240_000)

  it('keeps the emulators on loopback when the gateway is given another address', () => {
    expect(emulatorHostFor('0.0.0.0')).toBe('127.0.0.1')
    expect(emulatorHostFor('192.0.2.10')).toBe('127.0.0.1')
    expect(emulatorHostFor('127.0.0.5')).toBe('127.0.0.5')
  })

  it('refuses a FLOE_HOST that is not an IPv4 address, before starting anything', async () => {
    for (const host of ['localhost', '::1', '127.0.0.256', 'example.com']) {
      const r = await runFloe(['start'], { FLOE_DATA_DIR: join(dataDir, 'refused'), FLOE_HOST: host, PORT: '0' })
      expect({ host, code: r.code, stderr: r.stderr }).toEqual({ host, code: 2, stderr: expect.stringContaining('FLOE_HOST must be an IPv4 address') })
    }
  }, 120_000)
})

describe("DynamoDB Local's compiled launcher", () => {
  it('is not cached in a directory other users can write to', async () => {
    const root = mkdtempSync(join(tmpdir(), 'floe-launcher-'))
    try {
      chmodSync(root, 0o777)
      expect(unsafeDirProblem(root)).toMatch(/open to other users \(mode 777\)/)
      const lines: string[] = []
      expect(await compiledLauncher(javaCommand(), dynamoDbLocalDir(), (l) => lines.push(l), root)).toBeUndefined()
      expect(lines.join('\n')).toMatch(/not cached .*open to other users/)
      expect(readdirSync(root)).toEqual([])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
