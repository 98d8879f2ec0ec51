import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadCommands } from '../../../lib/cli/index'
import { runFloe } from '../../support/process'

const commands = await loadCommands()
const dataDir = mkdtempSync(join(tmpdir(), 'floe-help-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('floe help', () => {
  it("every command group answers --help with its own commands", async () => {
    const groups = [...new Set(commands.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!))]
    expect(groups).toEqual(expect.arrayContaining(['registry', 'org', 'apikey', 'schema', 'credentials']))
    const answers = await Promise.all(groups.map((g) => runFloe([g, '--help'])))
    groups.forEach((g, i) => {
      const r = answers[i]!
      expect(r.code, g).toBe(0)
      expect(r.stdout, g).toContain(`Usage: floe ${g} <command>`)
      for (const c of commands.filter((c) => c.name.startsWith(`${g} `))) expect(r.stdout, g).toContain(`floe ${c.usage}`)
      expect(r.stderr, g).not.toContain('unknown command')
    })
  })
  it('a group without its command says which commands it has (exit 2)', async () => {
    const r = await runFloe(['registry'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('floe registry push')
  })
  it('--version prints the version of the package', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }
    const r = await runFloe(['--version'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(`floe ${version}`)
  })
  it('start --help lists the environment variables', async () => {
    const r = await runFloe(['start', '--help'])
    expect(r.code).toBe(0)
    for (const v of ['PORT', 'FLOE_HOST', 'FLOE_DATA_DIR', 'FLOE_USERNAME', 'FLOE_PASSWORD', 'ACCEPT_LIMITED_USE_LICENSE', 'FLOE_COLLECTOR_CONFIG']) expect(r.stdout).toContain(v)
  })
  it('logs of a service that has no log yet says so and fails', async () => {
    mkdirSync(join(dataDir, 'logs'), { recursive: true })
    const r = await runFloe(['logs', 'collector'], { FLOE_DATA_DIR: dataDir })
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/no log for/)
  })
  it('command summaries are imperative (no third-person verbs)', () => {
    for (const c of commands) expect(c.summary, c.name).not.toMatch(/^[A-Z][a-z]+s\b/)
  })
})
