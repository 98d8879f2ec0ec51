import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { EndpointsFile } from '../../lib/local/cli-start'
import { alive, eventually, killOrphanDynamo } from '../support/process'
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

async function npmStart(): Promise<{ npm: ChildProcess; floePid: number; dynamoPid: number; exited: Promise<unknown> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-npm-start-'))
  dirs.push(dataDir)
  const npm = spawn('npm', ['start'], {
    cwd: projectRoot,
    env: { ...process.env, FLOE_DATA_DIR: dataDir, PORT: '0', ACCEPT_LIMITED_USE_LICENSE: '', FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(npm)
  const exited = new Promise((r) => npm.once('exit', r))
  let out = ''
  await new Promise<void>((ok, fail) => {
    const onData = (d: Buffer) => {
      out += d.toString()
      if (out.includes('Floe is up')) ok()
    }
    npm.stdout!.on('data', onData)
    npm.stderr!.on('data', onData)
    npm.once('exit', () => fail(new Error(`npm start exited before the stack was up:\n${out}`)))
  })
  const ep = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as EndpointsFile
  const dynamoPid = Number(readFileSync(join(dataDir, 'dynamodb.pid'), 'utf8'))
  expect(alive(ep.pid)).toBe(true)
  expect(alive(dynamoPid)).toBe(true)
  return { npm, floePid: ep.pid, dynamoPid, exited }
}

describe('npm start stops on a signal to the npm process alone', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: floe start and DynamoDB Local exit`, async () => {
      const { npm, floePid, dynamoPid, exited } = await npmStart()
      npm.kill(signal)
      await eventually(async () => (!alive(floePid) && !alive(dynamoPid) ? true : undefined), `floe start (${floePid}) and DynamoDB Local (${dynamoPid}) to exit after ${signal}`, 20_000)
      await exited
    }, 180_000)
  }
})
