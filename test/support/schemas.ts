/**
 * Schemas pushed to a local stack's registry the way a user does (`floe
 * registry push` of a directory in Iglu's static layout, in another process),
 * and the warm-up of the control plane's authorizer, for the tests that push
 * schemas and replay failed events.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { runFloe } from './process'
import { withAuth } from './stack'

/** A self-describing JSON Schema of an object with `properties` and nothing else. */
export function objectSchema(vendor: string, name: string, version: string, properties: Record<string, unknown>, description = 'a test event'): Record<string, unknown> {
  return {
    $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
    self: { vendor, name, format: 'jsonschema', version },
    description, type: 'object', properties, additionalProperties: false,
  }
}

/** `floe registry push` of one schema to the stack at `url`; a push is seen by enrich from its next batch, so nothing waits after it. */
export async function pushSchema(url: string, superKey: string, schema: Record<string, any>): Promise<void> {
  const { vendor, name, version } = schema.self as { vendor: string; name: string; version: string }
  const dir = mkdtempSync(join(tmpdir(), 'floe-push-'))
  mkdirSync(join(dir, vendor, name, 'jsonschema'), { recursive: true })
  writeFileSync(join(dir, vendor, name, 'jsonschema', version), JSON.stringify(schema))
  const r = await runFloe(['registry', 'push', dir, url, superKey])
  expect(r.code, r.stdout + r.stderr).toBe(0)
}

/** The authorizer's first answer (its module and the password hash) can take long on a busy machine: asks until it is not a 500. */
export async function warmControlPlane(url: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`${url}/control-plane/version`, { headers: withAuth() })
    if (r.status !== 500) return
  }
}

/** One tp2 POST of `events` (tracker parameters) to the collector at `url`, as a tracker sends it; it must be taken. */
export async function postTp2(url: string, events: readonly Record<string, string>[]): Promise<void> {
  const res = await fetch(`${url}/com.snowplowanalytics.snowplow/tp2`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: events }),
  })
  expect(res.status).toBe(200)
}

/** `POST /control-plane/recover` with `body`: the status and the JSON answer. */
export async function recoverRequest(url: string, body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const r = await fetch(`${url}/control-plane/recover`, { method: 'POST', headers: withAuth({ 'content-type': 'application/json' }), body: JSON.stringify(body) })
  return { status: r.status, body: (await r.json()) as Record<string, any> }
}
