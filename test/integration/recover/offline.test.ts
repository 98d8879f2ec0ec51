import { mkdirSync, mkdtempSync, readdirSync, readFileSync, watch, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { FIELDS } from '../../../lib/core/enrich/fields'
import { decodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { floe, runFloe } from '../../support/process'

// snowplow-event-recovery's own example configuration and bad rows, and the events its integration test expects (see NOTICE there)
const FIXTURES = resolve(__dirname, '../../fixtures/event-recovery')
const CONFIG = join(FIXTURES, 'config.json')
const ROWS = readFileSync(join(FIXTURES, 'input.txt'), 'utf8').split('\n').filter((l) => l.trim() !== '')

const SIZE_VIOLATION = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0', data: { processor: { artifact: 'c', version: '1' }, failure: { timestamp: '2024-01-01T00:00:00Z', maximumAllowedSizeBytes: 10, actualSizeBytes: 20, expectation: 'smaller' }, payload: { event: 'abc' } } })
const UNMATCHED = JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow.badrows/tracker_protocol_violations/jsonschema/1-0-0', data: { processor: { artifact: 'c', version: '1' }, failure: {}, payload: { vendor: 'v', version: '1' } } })

function enrichConfig(dir: string, input: string): string {
  const config = join(dir, 'enrich.hocon')
  writeFileSync(config, `license.accept = true
input { type = FileSystem, dir = "${input}" }
output {
  good { type = FileSystem, file = "${join(dir, 'enriched', 'good')}" }
  incomplete { type = FileSystem, file = "${join(dir, 'enriched', 'incomplete')}" }
  bad { type = FileSystem, file = "${join(dir, 'enriched', 'bad')}" }
}`)
  return config
}

/** An expected value as the enriched TSV writes it (timestamps with a space and milliseconds, booleans 1/0). */
function tsv(field: string, v: unknown): string {
  if (typeof v === 'boolean') return v ? '1' : '0'
  const s = String(v)
  if (!/tstamp/.test(field)) return s
  const [date, time] = s.split('T')
  const [hms, frac = ''] = time!.split('.')
  return `${date} ${hms}.${frac.padEnd(3, '0')}`
}

describe('floe recover --input --config --output (offline)', () => {
  it('recovers event-recovery\'s example bad rows into payloads that floe enrich turns into the events its integration test expects', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-recover-offline-'))
    const input = join(dir, 'in')
    mkdirSync(join(input, 'sub'), { recursive: true })
    writeFileSync(join(input, 'sub', 'rows.json.gz'), gzipSync(`${ROWS.join('\n')}\n`))
    writeFileSync(join(input, 'other.json'), `${SIZE_VIOLATION}\n\n${UNMATCHED}\n`)
    const out = join(dir, 'out')
    const r = await runFloe(['recover', '--input', input, '--config', CONFIG, '--output', out, '--json'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout)
    expect(report).toMatchObject({ rows: 14, recovered: 12, failed: 2, good: join(out, 'good'), bad: join(out, 'bad') })
    expect(report.reasons).toEqual(expect.arrayContaining([{ reason: 'size_violation bad rows cannot be recovered', count: 1 }, { reason: 'FailedToMatchConfiguration', count: 1 }]))
    expect(readdirSync(join(out, 'good'))).toHaveLength(12)
    const bad = readdirSync(join(out, 'bad')).flatMap((f) => readFileSync(join(out, 'bad', f), 'utf8').trim().split('\n').map((l) => JSON.parse(l)))
    expect(bad.map((b) => [b.schema, b.data.payload.schema, b.data.failure.error.slice(0, 26)])).toEqual([
      ['iglu:com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1', 'iglu:com.snowplowanalytics.snowplow.badrows/size_violation/jsonschema/1-0-0', 'size_violation bad rows ca'],
      ['iglu:com.snowplowanalytics.snowplow.badrows/recovery_error/jsonschema/1-0-1', 'iglu:com.snowplowanalytics.snowplow.badrows/tracker_protocol_violations/jsonschema/1-0-0', 'FailedToMatchConfiguration'],
    ])

    const e = floe(['enrich', '--config', enrichConfig(dir, join(out, 'good'))], { FLOE_IGLU_CENTRAL_URL: '' })
    expect(await e.exited).toBe(0)
    expect(e.output()).toMatch(/enrich done: 12 payloads .* good 12, incomplete 0, bad 0/)
    const got = readFileSync(join(dir, 'enriched', 'good'), 'utf8').trimEnd().split('\n').map((l) => Object.fromEntries(l.split('\t').map((v, i) => [FIELDS[i], v])))
    const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected_payloads.json'), 'utf8')) as Record<string, unknown>[]
    // The same events, field by field, but for what differs by design: the time of the run (etl_tstamp); and the SendGrid
    // adapter of a newer enrich (bounce and open 3-0-0, not 2-0-0; the client address from X-Forwarded-For).
    const differences = expected.map((x) => {
      const diffs = got.map((g) => Object.entries(x).filter(([k, v]) => k !== 'etl_tstamp' && g[k] !== tsv(k, v)).map(([k]) => k))
      return diffs.reduce((a, b) => (b.length < a.length ? b : a))
    })
    expect(differences).toEqual(expected.map((x) => (x.event_vendor === 'com.sendgrid' ? (x.event_name === 'bounce' ? ['user_ipaddress', 'event_version'] : ['event_version']) : [])))
  })

  it('refuses an unusable configuration with the place, and writes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-recover-offline-'))
    const config = join(dir, 'config.json')
    writeFileSync(config, JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0', data: { 'iglu:com.snowplowanalytics.snowplow.badrows/schema_violations/jsonschema/*-*-*': [{ name: 'f', conditions: [{ op: 'Test', path: '$.a', value: { regex: '(x+)\\1' } }], steps: [] }] } }))
    const r = await runFloe(['recover', '--input', join(FIXTURES, 'input.txt'), '--config', config, '--output', join(dir, 'out')])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/schema_violations~1jsonschema~1\*-\*-\*\/0\/conditions\/0\/value\/regex: .*backreference/i)
    expect(readdirSync(dir)).toEqual(['config.json'])
    // at most 64 KiB, as any recovery document
    writeFileSync(config, JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/4-0-0', data: {}, pad: 'x'.repeat(64 * 1024) }))
    const large = await runFloe(['recover', '--input', join(FIXTURES, 'input.txt'), '--config', config, '--output', join(dir, 'out')])
    expect(large.code).toBe(2)
    expect(large.stderr).toContain('is larger than 65536 bytes')
  })

  it('killed mid-way, leaves only whole payload files; run again, writes every one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-recover-offline-'))
    const input = join(dir, 'rows.json')
    const n = 3000
    writeFileSync(input, `${Array.from({ length: n }, (_, i) => ROWS[i % ROWS.length]).join('\n')}\n`)
    const out = join(dir, 'out')
    mkdirSync(join(out, 'good'), { recursive: true })
    const p = floe(['recover', '--input', input, '--config', CONFIG, '--output', out])
    await new Promise<void>((done) => {
      const w = watch(join(out, 'good'), () => {
        w.close()
        p.child.kill('SIGKILL')
        done()
      })
    })
    expect(await p.exited).toBe('SIGKILL')
    const partial = readdirSync(join(out, 'good'))
    expect(partial.length).toBeLessThan(n)
    for (const f of partial) expect(decodeCollectorPayload(readFileSync(join(out, 'good', f))).ok).toBe(true)
    const again = await runFloe(['recover', '--input', input, '--config', CONFIG, '--output', out, '--json'])
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: n, recovered: n, failed: 0 })
    expect(readdirSync(join(out, 'good'))).toHaveLength(n)
  }, 120_000)
})
