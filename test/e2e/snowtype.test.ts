import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { projectRoot } from '../../lib/local/handlers'
import { useLocalStack } from '../support/stack'
import { newTenant, objectSchema, putSchema } from '../integration/tracking-design/helpers'

/**
 * The real @snowplow/snowtype CLI generates TypeScript tracking code from event
 * specifications created through the API of a local stack.
 */
const stack = useLocalStack({ triggers: false })
const work = mkdtempSync(join(tmpdir(), 'floe-snowtype-'))
const SNOWTYPE = join(projectRoot, 'node_modules/@snowplow/snowtype/bin/bin')
let t: Awaited<ReturnType<typeof newTenant>>
let specId = ''
let dpId = ''

afterAll(() => rmSync(work, { recursive: true, force: true }))

function snowtype(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [SNOWTYPE, ...args], {
    cwd: work,
    env: {
      ...process.env,
      SNOWPLOW_CONSOLE_API_URL: `${stack.current.url}/api/msc`,
      SNOWPLOW_CONSOLE_API_KEY_ID: t.keyId,
      SNOWPLOW_CONSOLE_API_KEY: t.secret,
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (out += d.toString()))
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })))
}

function config(ids: { eventSpecificationIds?: string[]; dataProductIds?: string[] }) {
  writeFileSync(join(work, 'snowtype.config.json'), JSON.stringify({
    organizationId: t.orgId,
    tracker: '@snowplow/browser-tracker',
    language: 'typescript',
    outpath: './snowtype',
    igluCentralSchemas: [],
    dataStructures: [],
    repositories: [],
    eventSpecificationIds: ids.eventSpecificationIds ?? [],
    dataProductIds: ids.dataProductIds ?? [],
  }, null, 2))
}

beforeAll(async () => {
  await putSchema(stack.current, 'iglu:com.acme/checkout_step/jsonschema/1-0-0', objectSchema(
    { step: { type: 'string', maxLength: 20 }, value: { type: ['number', 'null'] } },
    { required: ['step'], description: 'A checkout step' },
  ))
  await putSchema(stack.current, 'iglu:com.acme/cart/jsonschema/1-0-0', objectSchema({ items: { type: 'integer', minimum: 0 } }, { required: ['items'] }))
  t = await newTenant(stack.current)
  const sa = await t.api('POST', '/source-apps/v1', { name: 'Web', appIds: ['web'], entities: { tracked: [], enriched: [] } })
  const dp = await t.api('POST', '/data-products/v2', { name: 'Checkout', domain: 'Commerce', sourceApplications: [sa.body.data[0].id] })
  dpId = dp.body.data[0].id
  const spec = await t.api('POST', '/event-specs/v1', {
    spec: {
      name: 'Checkout started',
      description: 'The user opens the checkout',
      dataProductId: dpId,
      sourceApplications: [sa.body.data[0].id],
      event: {
        source: 'iglu:com.acme/checkout_step/jsonschema/1-0-0',
        schema: { type: 'object', properties: { step: { type: 'string', enum: ['cart', 'payment'] } }, required: ['step'], additionalProperties: false },
      },
      entities: { tracked: [{ source: 'iglu:com.acme/cart/jsonschema/1-0-0', minCardinality: 1, maxCardinality: 1 }], enriched: [] },
    },
    message: 'initial draft',
  })
  expect(spec.status).toBe(201)
  expect(spec.body.errors).toEqual([])
  specId = spec.body.data[0].id
  const pub = await t.api('PUT', `/event-specs/v1/${specId}`, { spec: { ...spec.body.data[0], version: 1, status: 'published' } })
  expect(pub.status).toBe(200)
})

describe('snowtype against the local stack', () => {
  it('generate: tracking functions, validations and the lock file for a published specification', async () => {
    config({ eventSpecificationIds: [specId] })
    const r = await snowtype(['generate', '--instructions', '--validations'])
    expect(r.code, r.out).toBe(0)
    // no warnings: every schema is found in PROD too, nothing is outdated
    expect(r.out).toContain('Code generated')
    expect(r.out).not.toMatch(/warn|outdated|DEV/i)
    const code = readFileSync(join(work, 'snowtype/snowplow.ts'), 'utf8')
    expect(code).toContain('export function trackCheckoutStartedSpec(')
    // the property rules of the specification are merged into the data structure's type
    expect(code).toMatch(/export type CheckoutStepCheckoutStarted = \{\s+step: +Step;\s+value\?: number \| null;\s+\}/)
    expect(code).toContain('export type Step = "cart" | "payment";')
    expect(code).toContain('iglu:com.acme/checkout_step/jsonschema/1-0-0')
    expect(code).toContain('iglu:com.acme/cart/jsonschema/1-0-0')
    expect(code).toContain(specId)
    expect(code).toContain('Commerce')
    expect(JSON.parse(readFileSync(join(work, 'snowtype/.snowtype-lock.json'), 'utf8'))).toEqual({ eventSpecifications: { [specId]: 1 } })
    expect(existsSync(join(work, 'snowtype/validations.ts'))).toBe(true)
    expect(readFileSync(join(work, 'snowtype/instructions.md'), 'utf8')).toContain('Checkout started')
  }, 120_000)

  it('update: notices a newer version of the specification', async () => {
    const cur = (await t.api('GET', `/event-specs/v1/${specId}`)).body.data[0]
    expect((await t.api('PUT', `/event-specs/v1/${specId}`, { spec: { ...cur, version: 2, status: 'published', description: 'changed' } })).status).toBe(200)
    const r = await snowtype(['update', '--yes'])
    expect(r.code, r.out).toBe(0)
    expect(r.out).toContain(`${specId}: version 1`)
    expect(r.out).toContain(`${specId}: version 2`)
    expect(JSON.parse(readFileSync(join(work, 'snowtype/.snowtype-lock.json'), 'utf8'))).toEqual({ eventSpecifications: { [specId]: 2 } })
  }, 120_000)

  it('generate from a data product expands it into its specifications', async () => {
    config({ dataProductIds: [dpId] })
    const r = await snowtype(['generate'])
    expect(r.code, r.out).toBe(0)
    expect(readFileSync(join(work, 'snowtype/snowplow.ts'), 'utf8')).toContain('export function trackCheckoutStartedSpec(')
  }, 120_000)

  it('fails cleanly on an unknown specification and on bad credentials', async () => {
    config({ eventSpecificationIds: ['00000000-0000-4000-8000-000000000000'] })
    const r = await snowtype(['generate'])
    expect(r.code).toBe(1)
    expect(r.out).toContain('404 GET')
    const bad = await snowtype(['generate', '-k', 'wrong', '-s', t.keyId])
    expect(bad.code).toBe(1)
  }, 120_000)
})
