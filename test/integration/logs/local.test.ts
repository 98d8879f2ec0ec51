/**
 * The local stack's logs: what a function writes with console.* during an
 * invocation lands in its own file as JSON lines (concurrent invocations of
 * different functions included), warnings and errors also on the terminal
 * with the function's name, the stack's own lines in floe.log; files rotate at
 * FLOE_LOG_MAX_BYTES; `floe logs` prints the last lines and follows new ones.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { parseLogsArgs, runLogs } from '../../../lib/cli/logs'
import { invoke } from '../../../lib/local/handlers'
import { logEntries, runAsFunction } from '../../../lib/local/logs'
import { floe, runFloe } from '../../support/process'
import { useLocalStack } from '../../support/stack'

// Installed before the stack starts, so the routing console wraps it: what reaches the terminal is recorded here.
const terminal = vi.spyOn(console, 'error').mockImplementation(() => {})

const dataDir = mkdtempSync(join(tmpdir(), 'floe-logs-'))
const logs = join(dataDir, 'logs')
const MAX = 4096
const stack = useLocalStack({ triggers: false, logsDir: logs, environment: { FLOE_LOG_MAX_BYTES: String(MAX) } })

afterAll(() => {
  terminal.mockRestore()
  rmSync(dataDir, { recursive: true, force: true })
})

const read = (file: string) =>
  existsSync(join(logs, file))
    ? readFileSync(join(logs, file), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : []
const tick = () => new Promise((r) => setTimeout(r, 5))

describe('function logs', () => {
  it('puts what a function writes during an invocation into its own file, as JSON lines with time and service', async () => {
    expect(stack.current.url).toMatch(/^http/)
    // A malformed event: the health function's HTTP wrapper logs the error (a JSON line) and answers 500.
    const result = (await invoke('health', { notAnHttpEvent: true })) as { statusCode: number }
    expect(result.statusCode).toBe(500)
    const [entry] = read('health.log')
    expect(entry).toMatchObject({ level: 'error', msg: 'unhandled error', service: 'health' })
    expect(Date.parse(entry!.time as string)).toBeGreaterThan(Date.now() - 60_000)
    // errors also reach the terminal, prefixed with the function's name
    expect(terminal.mock.calls.some(([line]) => typeof line === 'string' && line.startsWith('[health] {"level":"error","msg":"unhandled error"'))).toBe(true)
    expect(existsSync(join(logs, 'collector.log'))).toBe(false)
  })

  it('wraps lines that are not JSON, and keeps the fields of JSON lines', async () => {
    await runAsFunction('trackingDesign', async () => {
      console.log('plain text, %d args', 2)
      await tick()
      console.info(JSON.stringify({ msg: 'json without time', level: 'debug', n: 1 }))
      console.warn({ an: 'object' })
    })
    const entries = read('tracking-design.log')
    expect(entries).toHaveLength(3)
    expect(Object.keys(entries[0]!)).toEqual(['time', 'level', 'service', 'msg'])
    expect(entries[0]).toMatchObject({ level: 'info', service: 'trackingDesign', msg: 'plain text, 2 args' })
    expect(entries[1]).toMatchObject({ level: 'debug', service: 'trackingDesign', msg: 'json without time', n: 1 })
    expect(entries[2]).toMatchObject({ level: 'warn', service: 'trackingDesign', msg: "{ an: 'object' }" })
    expect(terminal.mock.calls.some(([line]) => line === '[trackingDesign] plain text, 2 args')).toBe(false)
  })

  it('keeps concurrent invocations of different functions apart', async () => {
    const run = (fn: string) =>
      runAsFunction(fn, async () => {
        for (let i = 0; i < 20; i++) {
          console.log(JSON.stringify({ msg: `${fn} ${i}` }))
          await tick()
        }
      })
    await Promise.all([run('enrich'), run('registry'), run('enrich').then(() => undefined)])
    const enrich = read('enrich.log')
    const registry = read('registry.log')
    expect(enrich).toHaveLength(40)
    expect(registry).toHaveLength(20)
    expect(enrich.every((e) => e.service === 'enrich' && String(e.msg).startsWith('enrich '))).toBe(true)
    expect(registry.every((e) => e.service === 'registry' && String(e.msg).startsWith('registry '))).toBe(true)
  })

  it('leaves output outside invocations alone', () => {
    console.log('not from a function')
    expect(existsSync(join(logs, 'undefined.log'))).toBe(false)
  })

  it('writes the stack\'s own lines to floe.log', () => {
    const lines = read('floe.log')
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.every((l) => l.service === 'floe' && l.level === 'info' && typeof l.time === 'string')).toBe(true)
    expect(lines.some((l) => /^created (table|stream|bucket) /.test(String(l.msg)))).toBe(true)
  })

  it('rotates a file at FLOE_LOG_MAX_BYTES, keeping three older ones', () => {
    runAsFunction('archive', () => {
      for (let i = 0; i < 200; i++) console.log(JSON.stringify({ msg: `line ${i}`, pad: 'x'.repeat(60) }))
    })
    for (const f of ['archive.log', 'archive.log.1', 'archive.log.2', 'archive.log.3']) {
      expect(existsSync(join(logs, f)), f).toBe(true)
      expect(statSync(join(logs, f)).size).toBeLessThanOrEqual(MAX)
      expect(statSync(join(logs, f)).size).toBeGreaterThan(MAX / 2)
    }
    expect(existsSync(join(logs, 'archive.log.4'))).toBe(false)
    const current = read('archive.log')
    expect(current.at(-1)!.msg).toBe('line 199')
    // consecutive across the rotation
    const older = read('archive.log.1')
    expect(Number(String(older.at(-1)!.msg).slice(5)) + 1).toBe(Number(String(current[0]!.msg).slice(5)))
  })
})

describe('floe logs', () => {
  const env = { FLOE_DATA_DIR: dataDir }

  it('-n 5 prints the last 5 lines of a service\'s log, by service, function or kebab-case name', async () => {
    runAsFunction('searchLoader', () => {
      for (let i = 0; i < 12; i++) console.log(JSON.stringify({ msg: `loaded ${i}` }))
    })
    const r = await runFloe(['logs', 'esLoaderBad', '-n', '5'], env)
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { msg: string })
    expect(lines.map((l) => l.msg)).toEqual(['loaded 7', 'loaded 8', 'loaded 9', 'loaded 10', 'loaded 11'])
    for (const name of ['esLoaderGood', 'searchLoader', 'search-loader']) expect(parseLogsArgs([name, '-n', '5'])).toEqual({ log: 'searchLoader', follow: false, lines: 5 })
    expect(parseLogsArgs(['iglu'])).toEqual({ log: 'registry', follow: false, lines: 50 })
    expect(parseLogsArgs(['dashboard', '-f'])).toEqual({ log: 'ui', follow: true, lines: 50 })
    expect(parseLogsArgs(['tracking-design', '-n3'])).toEqual({ log: 'trackingDesign', follow: false, lines: 3 })
    expect(parseLogsArgs(['floe'])).toMatchObject({ log: 'floe' })
    expect(() => parseLogsArgs(['collector', '-n', 'x'])).toThrow(/-n needs a whole number of lines/)
    expect(() => parseLogsArgs([])).toThrow(/which service\?/)
  })

  it('reads back across rotated files when the current one is short', async () => {
    const kept = ['archive.log.3', 'archive.log.2', 'archive.log.1', 'archive.log'].flatMap((f) => read(f).map((e) => e.msg as string))
    expect(kept.length).toBeGreaterThan(60)
    const r = await runFloe(['logs', 'archive', '-n', '1000'], env)
    expect(r.code, r.stderr).toBe(0)
    const msgs = r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg)
    expect(msgs).toEqual(kept)
    expect(msgs.at(-1)).toBe('line 199')
    const some: string[] = []
    expect(await runLogs(['archive', '-n', String(kept.length - 10)], { out: (l) => some.push(l), dir: logs })).toBe(0)
    expect(some.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(kept.slice(10))
  })

  it('-f follows new lines, across a rotation, until interrupted', async () => {
    const p = floe(['logs', 'registry', '-f', '-n', '1'], env)
    await p.waitFor('"msg":"registry 19"')
    await runAsFunction('registry', async () => {
      console.log(JSON.stringify({ msg: 'after follow 1' }))
      // printed: the follower reads the current file
      await p.waitFor('"msg":"after follow 1"')
      // enough to rotate the file while it is followed
      for (let i = 0; i < 60; i++) console.log(JSON.stringify({ msg: `bulk ${i}`, pad: 'y'.repeat(60) }))
      await p.waitFor('"msg":"bulk 59"')
      console.log(JSON.stringify({ msg: 'after rotation' }))
    })
    expect(existsSync(join(logs, 'registry.log.1'))).toBe(true)
    await p.waitFor('"msg":"after rotation"')
    p.child.kill('SIGINT')
    expect(await p.exited).toBe(0)
    const msgs = p
      .output()
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg)
    expect(msgs).toEqual(['registry 19', 'after follow 1', ...Array.from({ length: 60 }, (_, i) => `bulk ${i}`), 'after rotation'])
  })

  it('refuses an unknown name with exit code 2, listing the valid names', async () => {
    const r = await runFloe(['logs', 'nope'], env)
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/unknown service 'nope'; valid names are services: collector, enrich, esLoaderGood, esLoaderBad, registry, dashboard, searchstore; functions: .*trackingDesign.*; floe/)
  })
})

describe('log entries', () => {
  it('one entry per JSON line when every line is JSON, one wrapped entry otherwise', () => {
    const now = new Date('2025-01-01T00:00:00Z')
    expect(logEntries('enrich', 'info', '{"a":1}\n{"b":2,"time":"t0","service":"other"}\n', now)).toEqual([
      { time: '2025-01-01T00:00:00.000Z', level: 'info', service: 'enrich', a: 1 },
      { time: 't0', level: 'info', service: 'other', b: 2 },
    ])
    expect(logEntries('enrich', 'error', 'Error: boom\n    at x (y.ts:1:1)\n', now)).toEqual([{ time: '2025-01-01T00:00:00.000Z', level: 'error', service: 'enrich', msg: 'Error: boom\n    at x (y.ts:1:1)' }])
    expect(logEntries('enrich', 'info', '[1,2]', now)).toEqual([{ time: '2025-01-01T00:00:00.000Z', level: 'info', service: 'enrich', msg: '[1,2]' }])
  })
})
