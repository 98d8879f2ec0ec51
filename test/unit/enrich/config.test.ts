import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LICENSE_MESSAGE, validateConfig } from '../../../lib/core/enrich/config'
import { loadConfig, parseHocon } from '../../../lib/core/enrich/config-file'
import { DEFAULT_CONFIG_TEXT } from '../../../lib/core/enrich/config/default'
import { projectRoot } from '../../../lib/local/handlers'

const dir = resolve(projectRoot, 'lib/core/enrich/config')
const yes = { ACCEPT_LIMITED_USE_LICENSE: 'yes' }
const parse = async (text: string, env: Record<string, string> = yes) => validateConfig(await parseHocon(text), { env })
const minimal = `input { streamName = raw }, output { good { streamName = good }, incomplete { streamName = incomplete }, bad { streamName = bad } }`

describe('enrich configuration', () => {
  it('the shipped files parse; the embedded default is enrich.kinesis.hocon', async () => {
    expect(readFileSync(resolve(dir, 'enrich.kinesis.hocon'), 'utf8')).toBe(DEFAULT_CONFIG_TEXT)
    for (const f of ['enrich.kinesis.hocon', 'enrich.kinesis.reference.hocon', 'enrich.file.hocon']) {
      const r = await loadConfig(resolve(dir, f), yes)
      expect(r.ok, `${f}: ${JSON.stringify(r)}`).toBe(true)
    }
  })

  it('defaults from the tables', async () => {
    const r = await parse(minimal)
    if (!r.ok || r.config.variant !== 'kinesis') throw new Error(JSON.stringify(r))
    const c = r.config
    expect(c.concurrency).toEqual({ enrich: 256, sink: 1 })
    expect(c.input).toMatchObject({ appName: 'floe-enrich-kinesis', initialPosition: { type: 'TRIM_HORIZON' }, retrievalMode: { type: 'Polling', maxRecords: 10000 }, bufferSize: 3 })
    expect(c.output.good).toMatchObject({ partitionKey: undefined, recordLimit: 500, backoffPolicy: { minBackoffMs: 100, maxBackoffMs: 10000, maxRetries: 10 }, throttledBackoffPolicy: { minBackoffMs: 100, maxBackoffMs: 1000 } })
    expect(c.featureFlags).toEqual({ acceptInvalid: false, legacyEnrichmentOrder: false, exitOnJsCompileError: true })
    expect(c.monitoring.metrics.stdout).toBeUndefined()
    expect(c.output.pii).toBeUndefined()
  })

  it('other outputs default to the good output settings', async () => {
    const r = await parse(`${minimal}, output.good.recordLimit = 100, output.good.backoffPolicy.maxRetries = 3, output.bad.recordLimit = 7`)
    if (!r.ok || r.config.variant !== 'kinesis') throw new Error(JSON.stringify(r))
    expect(r.config.output.incomplete).toMatchObject({ recordLimit: 100, backoffPolicy: { maxRetries: 3 } })
    expect(r.config.output.bad).toMatchObject({ recordLimit: 7, backoffPolicy: { maxRetries: 3 } })
  })

  it('licence: config or environment, else a clear message', async () => {
    expect(await parse(minimal, {})).toEqual({ ok: false, errors: [LICENSE_MESSAGE] })
    expect((await parse(`license.accept = true, ${minimal}`, {})).ok).toBe(true)
    expect((await parse(`license.accept = false, ${minimal}`, {})).ok).toBe(false)
    expect((await parse(minimal, { ACCEPT_LIMITED_USE_LICENSE: 'YES' })).ok).toBe(true)
  })

  it('unknown keys and wrong types name the key', async () => {
    expect(await parse(`${minimal}, output.good.recordLimt = 5`)).toEqual({ ok: false, errors: ['output.good.recordLimt: unknown parameter'] })
    expect(await parse(`${minimal}, concurrency.enrich = lots`)).toEqual({ ok: false, errors: ['concurrency.enrich: must be a whole number, got "lots"'] })
    expect(await parse(`${minimal}, output.good.partitionKey = nope`)).toMatchObject({ ok: false, errors: [expect.stringContaining('output.good.partitionKey: must be an atomic field such as event_id')] })
    expect(await parse(`${minimal}, monitoring.metrics.stdout.period = soon`)).toMatchObject({ ok: false, errors: [expect.stringContaining('monitoring.metrics.stdout.period')] })
    expect(await parse(`${minimal}, validation.atomicFieldsLimits { app_id = 5, nope = 3 }`)).toMatchObject({ ok: false, errors: [expect.stringContaining('[nope] are not supported')] })
    expect(await parse(`input { }, output { good { streamName = good }, bad { streamName = bad } }`)).toMatchObject({ ok: false, errors: expect.arrayContaining(['input.streamName: required', 'output.incomplete.streamName: required']) })
  })

  it('other variants are recognised and refused', async () => {
    for (const [text, key, variant] of [
      [`input { subscription = "projects/p/subscriptions/s" }`, 'input.subscription', 'subscription-topic'],
      [`input { topicName = raw, bootstrapServers = "k:9092" }`, 'input.topicName', 'partitioned-log'],
      [`input { topic = raw, lookupHost = h, lookupPort = 4161 }`, 'input.lookupHost', 'lookup-queue'],
    ] as const) {
      const r = await parse(text)
      expect(r.ok).toBe(false)
      expect((r as { errors: string[] }).errors).toContain(`${key}: a parameter of the ${variant} variant, which is not supported by this deployment (it runs the shard-stream variant on Kinesis, and the file-based variant)`)
    }
  })

  it('file-based variant and atomic limits override', async () => {
    const r = await parse(`input { type = FileSystem, dir = /in }, output { good { type = FileSystem, file = /g, maxBytes = 100 }, bad { type = FileSystem, file = /b } }, validation.atomicFieldsLimits.app_id = 5, monitoring.metrics.stdout { period = 10 seconds, prefix = "x.y." }`)
    if (!r.ok || r.config.variant !== 'file') throw new Error(JSON.stringify(r))
    expect(r.config.output).toEqual({ good: { type: 'FileSystem', file: '/g', maxBytes: 100 }, bad: { type: 'FileSystem', file: '/b', maxBytes: undefined }, incomplete: undefined, pii: undefined })
    expect(r.config.validation.atomicFieldsLimits).toEqual({ app_id: 5 })
    expect(r.config.monitoring.metrics.stdout).toEqual({ periodMs: 10000, prefix: 'x.y' })
  })

  it('monitoring.sentry: a DSN naming a project, and tags', async () => {
    const ok = await parse(`${minimal}, monitoring.sentry { dsn = "https://abc123@o1.ingest.sentry.io/4506", tags { team = data, n = 3 } }`)
    expect(ok.ok && ok.config.monitoring.sentry).toEqual({ dsn: 'https://abc123@o1.ingest.sentry.io/4506', tags: { team: 'data', n: '3' } })
    for (const dsn of ['http://sentry.acme.com', 'https://sentry.acme.com/1', 'ftp://k@sentry.acme.com/1', 'not a url']) {
      expect(await parse(`${minimal}, monitoring.sentry.dsn = "${dsn}"`)).toEqual({
        ok: false,
        errors: [`monitoring.sentry.dsn: must be a Sentry DSN such as https://<key>@<host>/<projectId>, got ${JSON.stringify(dsn)}`],
      })
    }
    expect(await parse(`${minimal}, monitoring.sentry.tags { a = b }`)).toEqual({ ok: false, errors: ['monitoring.sentry.dsn: required'] })
    expect(await parse(`${minimal}, monitoring.sentry { dsn = "https://k@h/1", tags = [x] }`)).toEqual({ ok: false, errors: ['monitoring.sentry.tags: must be an object of strings'] })
  })

  it('input settings without a counterpart on a Lambda trigger are accepted as notices; concurrency.sink has none on the Kinesis variant', async () => {
    const r = await parse(`${minimal}, input { bufferSize = 5, region = eu-west-1 }, concurrency.sink = 4`)
    if (!r.ok) throw new Error(JSON.stringify(r))
    expect(r.config.notices.map((n) => n.key)).toEqual(['input.region', 'input.bufferSize'])
    expect(r.config.concurrency.sink).toBe(4)
    const stray = await parse(`${minimal}, input.initialPosition { type = LATEST, timestamp = "2026-01-01T00:00:00Z" }`)
    expect(stray.ok && stray.config.notices).toEqual([{ key: 'input.initialPosition.timestamp', reason: 'it is where an AT_TIMESTAMP start begins, and input.initialPosition.type is LATEST' }])
    const plain = await parse(minimal)
    expect(plain.ok && plain.config.notices).toEqual([])
    const file = await parse(`input { type = FileSystem, dir = /in }, output { good { type = FileSystem, file = /g }, bad { type = FileSystem, file = /b } }, concurrency.sink = 2`)
    expect(file.ok && file.config.notices.map((n) => n.key)).toEqual(['concurrency.sink'])
  })

  it('warns that the telemetry settings have no effect, on both variants', async () => {
    const reason = 'Floe sends no telemetry, so there is nothing to disable or to identify'
    const k = await parse(`${minimal}, telemetry { disable = true, userProvidedId = abc }`)
    expect(k.ok && k.config.notices).toEqual([{ key: 'telemetry.disable', reason }, { key: 'telemetry.userProvidedId', reason }])
    const file = await parse(`input { type = FileSystem, dir = /in }, output { good { type = FileSystem, file = /g }, bad { type = FileSystem, file = /b } }, telemetry.disable = false`)
    expect(file.ok && file.config.notices).toEqual([{ key: 'telemetry.disable', reason }])
  })
})
