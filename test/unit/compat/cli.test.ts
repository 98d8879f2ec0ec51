import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runFloe } from '../../support/process'
import { makeAjv } from './helpers'

const floe = runFloe

describe('floe schema compat', () => {
  let dir: string
  const file = (name: string): string => join(dir, name)
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-compat-'))
    await writeFile(file('a.json'), JSON.stringify({ type: 'object', properties: { n: { type: 'string', maxLength: 3 } }, additionalProperties: false }))
    await writeFile(file('b.json'), JSON.stringify({ type: 'object', properties: { n: { type: 'string', maxLength: 5 } } }))
    await writeFile(file('u.json'), JSON.stringify({ type: 'object', properties: { n: { type: 'string', format: 'strict-uri' } } }))
    await writeFile(file('ref.json'), JSON.stringify({ type: 'object', properties: { n: { $ref: 'iglu:com.acme/short/jsonschema/1-0-0' } } }))
    await writeFile(file('bad.json'), '{"type": ')
    const reg = join(dir, 'registry', 'com.acme', 'short', 'jsonschema')
    await import('node:fs/promises').then((fs) => fs.mkdir(reg, { recursive: true }))
    await writeFile(join(reg, '1-0-0'), JSON.stringify({ type: 'string', maxLength: 2 }))
  })

  it('prints Compatible with the time taken', async () => {
    const r = await floe(['schema', 'compat', file('a.json'), file('b.json')])
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout) as { result: string; ms: number }
    expect(out.result).toBe('Compatible')
    expect(typeof out.ms).toBe('number')
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
  })

  it('prints an Incompatible witness that ajv confirms, and Undecidable reasons', async () => {
    const [inc, und] = await Promise.all([
      floe(['schema', 'compat', file('b.json'), file('a.json')]),
      floe(['schema', 'compat', file('a.json'), file('u.json')]),
    ])
    expect(inc.code).toBe(0)
    const out = JSON.parse(inc.stdout) as { result: string; witness: unknown }
    expect(out.result).toBe('SchemaIncompatible')
    const ajv = makeAjv()
    expect(ajv.validate({ type: 'object', properties: { n: { type: 'string', maxLength: 5 } } }, out.witness)).toBe(true)
    expect(und.code).toBe(0)
    expect(JSON.parse(und.stdout)).toMatchObject({ result: 'SchemaUndecidable', reasons: [{ keyword: 'format', path: '#/properties/n' }] })
  })

  it('resolves iglu references from a static registry directory', async () => {
    const r = await floe(['schema', 'compat', file('ref.json'), file('b.json'), '--iglu', join(dir, 'registry')])
    expect(JSON.parse(r.stdout)).toMatchObject({ result: 'Compatible' })
  })

  it('exits 2 with a one-line error for missing or invalid files', async () => {
    const [missing, bad, usage] = await Promise.all([
      floe(['schema', 'compat', file('nope.json'), file('b.json')]),
      floe(['schema', 'compat', file('bad.json'), file('b.json')]),
      floe(['schema', 'compat', file('a.json')]),
    ])
    expect(missing.code).toBe(2)
    expect(missing.stderr.trim().split('\n')).toHaveLength(1)
    expect(missing.stderr).toContain('file not found')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('invalid JSON')
    expect(usage.code).toBe(2)
    expect(missing.stdout).toBe('')
  })
})
