import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findSchemaFiles } from '../../../lib/cli/registry'
import { toIgluUri, type SchemaKey } from '../../../lib/core/iglu/keys'
import { hasErrors, lint } from '../../../lib/core/iglu/lint'
import { EmbeddedRepository, HttpRepository } from '../../../lib/core/iglu/repositories'
import { Resolver } from '../../../lib/core/iglu/resolver'
import { serveStatic } from './static-server'
import { igluCentral } from '../../support/iglu-central'

/** Iglu Central (a directory holding `schemas/`). */
const central = igluCentral

describe('resolver against Iglu Central', () => {
  let files: { key: SchemaKey; file: string }[] = []
  let server: Awaited<ReturnType<typeof serveStatic>>
  beforeAll(async () => {
    files = await findSchemaFiles(resolve(central, 'schemas'))
    server = await serveStatic(central)
  })
  afterAll(() => server?.close())

  it('has the JSON schemas of the snapshot, and none fails lint', () => {
    expect(files.length).toBeGreaterThanOrEqual(660)
    const failing = files.filter((f) => hasErrors(lint(JSON.parse(readFileSync(f.file, 'utf8'))))).map((f) => toIgluUri(f.key))
    expect(failing).toEqual([])
  })

  for (const mode of ['embedded', 'static HTTP'] as const) {
    it(`resolves and compiles every schema from ${mode}`, async () => {
      const repo = mode === 'embedded' ? new EmbeddedRepository(central, { name: 'central' }) : new HttpRepository(server.url, { name: 'central' })
      const r = new Resolver({ repositories: [repo] })
      const problems: string[] = []
      for (const { key, file } of files) {
        const res = await r.lookupSchema(key)
        if (!res.ok) {
          problems.push(res.message)
          continue
        }
        expect(res.value).toEqual(JSON.parse(readFileSync(file, 'utf8')))
        const v = await r.validatorFor(key)
        if (!v.ok) problems.push(v.message)
      }
      expect(problems).toEqual([])
    })

    it(`lists versions and finds the latest from ${mode}`, async () => {
      const repo = mode === 'embedded' ? new EmbeddedRepository(central, { name: 'central' }) : new HttpRepository(server.url, { name: 'central' })
      const r = new Resolver({ repositories: [repo] })
      const list = await r.listSchemas('com.snowplowanalytics.snowplow', 'payload_data', 1)
      expect(list.ok && list.value.map(toIgluUri)).toEqual([0, 1, 2, 3, 4].map((a) => `iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-${a}`))
      expect(await r.latestSchemaKey('com.snowplowanalytics.snowplow.badrows', 'schema_violations', 2)).toMatchObject({
        ok: true, value: { version: { model: 2, revision: 0, addition: 1 } },
      })
      const miss = await r.lookupSchema('iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-99')
      expect(miss).toMatchObject({ ok: false, message: 'Schema iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-99 could not be resolved (central: not found)' })
    })

    it(`validates events with Iglu Central schemas from ${mode}`, async () => {
      const repo = mode === 'embedded' ? new EmbeddedRepository(central, { name: 'central' }) : new HttpRepository(server.url, { name: 'central' })
      const r = new Resolver({ repositories: [repo] })
      const ctx = {
        schema: 'iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-1',
        data: [{ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: '0c1b8e1c-0a40-4fb8-9cee-5a6f6ebc2a0c' } }],
      }
      expect(await r.validate(ctx)).toMatchObject({ ok: true })
      const page = await r.validate(ctx.data[0])
      expect(page).toMatchObject({ ok: true })
      const bad = await r.validate({ schema: 'iglu:com.snowplowanalytics.snowplow/web_page/jsonschema/1-0-0', data: { id: 42 } })
      expect(bad).toMatchObject({ ok: false, reason: 'invalid-data' })
    })
  }
})
