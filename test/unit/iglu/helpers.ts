import type { HttpRequest, HttpResponse } from '../../../lib/http/types'
import { createRegistryService, type RegistryServiceOptions } from '../../../lib/core/iglu/service'
import { MemoryKeyStore, MemoryPublisher, MemorySchemaStore } from '../../../lib/core/iglu/store'

export const SUPER_KEY = '6f1a1c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b'
export const META = 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#'

export function request(method: string, pathAndQuery: string, init: { body?: unknown; apikey?: string; headers?: Record<string, string> } = {}): HttpRequest {
  const [path, rawQuery = ''] = pathAndQuery.split('?') as [string, string?]
  const query: Record<string, string> = {}
  for (const part of rawQuery.split('&').filter(Boolean)) {
    const [k, v = ''] = part.split('=')
    query[decodeURIComponent(k!)] = decodeURIComponent(v)
  }
  const body = init.body === undefined ? Buffer.alloc(0) : Buffer.from(typeof init.body === 'string' ? init.body : JSON.stringify(init.body))
  const headers: Record<string, string> = { ...(init.headers ?? {}) }
  if (init.apikey) headers.apikey = init.apikey
  return { method, path, headers, query, rawQuery, cookies: [], body, sourceIp: '127.0.0.1', params: {}, timeEpochMs: Date.now() }
}

export function schema(vendor: string, name: string, version: string, extra: Record<string, unknown> = {}) {
  return {
    $schema: META,
    description: `${name} ${version}`,
    self: { vendor, name, format: 'jsonschema', version },
    type: 'object',
    properties: { a: { type: 'string', maxLength: 10 } },
    additionalProperties: false,
    ...extra,
  }
}

export function makeRegistry(opts: Partial<RegistryServiceOptions> = {}) {
  const schemas = new MemorySchemaStore()
  const keys = new MemoryKeyStore()
  const publisher = new MemoryPublisher()
  const handler = createRegistryService({ schemas, keys, superKeys: keys, publisher, superApiKey: SUPER_KEY, ...opts })
  const call = async (method: string, path: string, init: Parameters<typeof request>[2] = {}) => {
    const res: HttpResponse = await handler(request(method, `/registry-server/api${path}`, init))
    const text = typeof res.body === 'string' ? res.body : (res.body?.toString('utf8') ?? '')
    let body: any = text
    try {
      body = JSON.parse(text)
    } catch {}
    return { status: res.statusCode, body, headers: res.headers ?? {} }
  }
  return { handler, call, schemas, keys, publisher }
}
