import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { EndpointsFile } from '../../lib/local/cli-start'
import { alive, killOrphanDynamo, npmStart, within, type NpmStarted } from '../support/process'
import { TEST_CREDENTIALS } from '../support/stack'

// `npm start` as a user runs it; a signal is sent to the npm process only (not its group).
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

async function start(): Promise<NpmStarted> {
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-npm-start-'))
  dirs.push(dataDir)
  const started = await npmStart(dataDir, { ACCEPT_LIMITED_USE_LICENSE: '', FLOE_USERNAME: TEST_CREDENTIALS.username, FLOE_PASSWORD: TEST_CREDENTIALS.password })
  children.push(started.npm)
  expect(alive(started.endpoints.pid)).toBe(true)
  expect(alive(started.dynamoPid)).toBe(true)
  return started
}

describe('npm start stops on a signal to the npm process alone', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal}: floe start and DynamoDB Local exit`, async () => {
      const { npm, endpoints, dynamoPid, output, closed } = await start()
      const floePid = endpoints.pid
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
