import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { EndpointsFile } from '../../lib/local/cli-start'
import { alive, killOrphanDynamo, within } from '../support/process'
import { TEST_CREDENTIALS } from '../support/stack'

// `npm start` as a user runs it; a signal is sent to the npm process only (not its group).
const projectRoot = resolve(__dirname, '../..')
const dirs: string[] = []
const children: ChildProcess[] = []

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const d of dirs) {
    killOrphanDynamo(d)
    try {
      const ep = JSON.parse(readFileSync(join(d, 'endpoints.json'), 'utf8')) as EndpointsFile
      if (alive(ep.pid)) process.kill(ep.pid, 'SIGKILL')
    } catch {}
    rmSync(d, { recursive: true, force: true })
  }
})

interface Started {
  readonly npm: ChildProcess
  readonly floePid: number
  readonly dynamoPid: number
  /** Everything npm start printed so far (stdout and stderr). */
  output(): string
  /** npm's exit once its output is closed too: every process that wrote to it is gone. */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

async function npmStart(): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-npm-start-'))
  dirs.push(dataDir)
  const npm = spawn('npm', ['start'], {
    cwd: projectRoot,
    env: { ...process.env, FLOE_DATA_DIR: dataDir, PORT: '0', ACCEPT_LIMITED_USE_LICENSE: '', FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(npm)
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => npm.once('close', (code, signal) => r({ code, signal })))
  let out = ''
  await new Promise<void>((ok, fail) => {
    const onData = (d: Buffer) => {
      out += d.toString()
      if (out.includes('Floe is up')) ok()
    }
    npm.stdout!.on('data', onData)
    npm.stderr!.on('data', onData)
    void closed.then(() => fail(new Error(`npm start exited before the stack was up:\n${out}`)))
  })
  const ep = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as EndpointsFile
  const dynamoPid = Number(readFileSync(join(dataDir, 'dynamodb.pid'), 'utf8'))
  expect(alive(ep.pid)).toBe(true)
  expect(alive(dynamoPid)).toBe(true)
  return { npm, floePid: ep.pid, dynamoPid, output: () => out, closed }
}

describe('npm start stops on a signal to the npm process alone', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: floe start and DynamoDB Local exit`, async () => {
      const { npm, floePid, dynamoPid, output, closed } = await npmStart()
      npm.kill(signal)
      // npm exits after the script it runs (floe start, which it execs); floe start reports "stopped"
      // only once DynamoDB Local has exited. So the exit is the event to wait for, and then nothing may be left.
      const end = await within(closed, 120_000, () => `npm start still running 120 s after ${signal}; output:\n${output()}`)
      expect(output(), 'floe start stopped the stack itself').toContain(`${signal}: stopping`)
      expect(output()).toMatch(/ stopped\n/)
      expect(end).toEqual({ code: 0, signal: null })
      expect(alive(floePid), `floe start (${floePid}) exited`).toBe(false)
      expect(alive(dynamoPid), `DynamoDB Local (${dynamoPid}) exited`).toBe(false)
    }, 240_000)
  }
})
