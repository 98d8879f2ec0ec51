import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findSchemaFiles } from '../../../lib/cli/registry'
import { toIgluUri, toSchemaPath } from '../../../lib/core/iglu/keys'
import { runFloe } from '../../support/process'
import { useLocalStack } from '../../support/stack'
import { igluCentral } from '../../support/iglu-central'

const SUPER = '3c9e1a44-7b2d-4f60-8e15-9a0b1c2d3e4f'
const central = igluCentral
const schemasDir = resolve(central, 'schemas')
const stack = useLocalStack({ triggers: false, environment: { FLOE_SUPER_API_KEY: SUPER } })

const floe = runFloe

describe('floe registry CLI against a local registry', () => {
  it('creates keys with keygen, accepting the stack URL or the /registry-server URL', async () => {
    for (const url of [stack.current.url, `${stack.current.url}/registry-server`]) {
      const res = await floe(['registry', 'keygen', 'com.acme', url, SUPER])
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout).toMatch(/^Read key: {2}[0-9a-f-]{36}\nWrite key: [0-9a-f-]{36}\n$/)
    }
    const denied = await floe(['registry', 'keygen', 'com.acme', stack.current.url, '11111111-2222-4333-8444-555555555555'])
    expect(denied.code).toBe(1)
    expect(denied.stderr).toContain('Not sufficient privileges to create keys')
  })

  it('pushes all of Iglu Central and reads every schema back unchanged', async () => {
    const files = await findSchemaFiles(schemasDir)
    expect(files.length).toBe(660)
    const t0 = Date.now()
    const res = await floe(['registry', 'push', schemasDir, `${stack.current.url}/registry-server`, SUPER, '--public'])
    const seconds = (Date.now() - t0) / 1000
    expect(res.code, res.stdout.split('\n').filter((l) => l.includes('FAILED')).slice(0, 10).join('\n')).toBe(0)
    expect(res.stdout.trim().split('\n').at(-1)).toBe('660 schemas: 660 created, 0 updated, 0 unchanged, 0 failed')
    expect(res.stdout.split('\n').filter((l) => /^\[\s*\d+\/660\] created /.test(l))).toHaveLength(660)
    expect(seconds).toBeLessThan(90)

    // Every schema, one by one, anonymously (they are public).
    const base = `${stack.current.url}/registry-server/api/schemas`
    const queue = [...files]
    const mismatches: string[] = []
    await Promise.all(Array.from({ length: 16 }, async () => {
      for (let f = queue.shift(); f; f = queue.shift()) {
        const r = await fetch(`${base}/${toSchemaPath(f.key)}`)
        const got = await r.json()
        try {
          expect(r.status).toBe(200)
          expect(got).toEqual(JSON.parse(readFileSync(f.file, 'utf8')))
        } catch {
          mismatches.push(toIgluUri(f.key))
        }
      }
    }))
    expect(mismatches).toEqual([])

    // And all at once, as a static pull would.
    const all = await (await fetch(`${base}?repr=canonical`)).json() as unknown[]
    expect(all).toHaveLength(660)
    const byUri = new Map(files.map((f) => [toIgluUri(f.key), JSON.parse(readFileSync(f.file, 'utf8'))]))
    for (const doc of all as { self: Record<string, string> }[]) {
      expect(doc).toEqual(byUri.get(`iglu:${doc.self.vendor}/${doc.self.name}/${doc.self.format}/${doc.self.version}`))
    }
  }, 120_000)

  it('pushing again reports every schema as unchanged', async () => {
    const res = await floe(['registry', 'push', schemasDir, stack.current.url, SUPER, '--public', '--concurrency', '16'])
    expect(res.code).toBe(0)
    expect(res.stdout.trim().split('\n').at(-1)).toBe('660 schemas: 0 created, 0 updated, 660 unchanged, 0 failed')
  }, 120_000)

  it('lint passes on Iglu Central', async () => {
    const res = await floe(['registry', 'lint', schemasDir, '--quiet'])
    expect(res.code).toBe(0)
    expect(res.stdout.trim().split('\n').at(-1)).toMatch(/^660 schemas linted: 660 passed, 0 failed/)
  })

  it('changes the super key with floe registry superkey', async () => {
    const res = await floe(['registry', 'superkey', stack.current.url, SUPER])
    expect(res.code, res.stderr).toBe(0)
    const next = /New key \(shown once\): ([0-9a-f-]{36})/.exec(res.stdout)?.[1]
    expect(next).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/)
    const keygen = await floe(['registry', 'keygen', 'com.example', stack.current.url, next!])
    expect(keygen.code, keygen.stderr).toBe(0)
    const refused = await floe(['registry', 'superkey', stack.current.url, SUPER, 'not-a-v4-key'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('UUID v4')
  })
})
