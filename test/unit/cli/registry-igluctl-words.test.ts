import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { findCommand, run } from '../../../lib/cli/index'
import { makeRegistry, schema, SUPER_KEY } from '../iglu/helpers'

// The pure registry service behind a loopback HTTP server.
const registry = makeRegistry()
const server = createServer(async (req: IncomingMessage, res) => {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const url = new URL(req.url ?? '/', 'http://x')
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v
  const out = await registry.handler({
    method: req.method ?? 'GET', path: url.pathname, headers, query: Object.fromEntries(url.searchParams), rawQuery: url.search.slice(1),
    cookies: [], body: Buffer.concat(chunks), sourceIp: '127.0.0.1', params: {}, timeEpochMs: Date.now(),
  })
  res.writeHead(out.statusCode, out.headers as Record<string, string>)
  res.end(out.body ?? '')
})
let url = ''
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

async function floe(argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = ''
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((stdout += String(s)), true))
  try {
    return { code: await run(argv), stdout }
  } finally {
    spy.mockRestore()
  }
}

describe("floe registry with igluctl's words", () => {
  it('finds server keygen and static push', async () => {
    expect((await findCommand(['registry', 'server', 'keygen', 'com.acme', 'u', SUPER_KEY]))?.command.name).toBe('registry server keygen')
    expect((await findCommand(['registry', 'static', 'push', 'dir', 'u', SUPER_KEY, '--public']))?.command.name).toBe('registry static push')
  })
  it('creates keys with server keygen and uploads with static push --public', async () => {
    const keys = await floe(['registry', 'server', 'keygen', 'com.acme', url, SUPER_KEY])
    expect(keys.code).toBe(0)
    const write = /Write key: ([0-9a-f-]{36})/.exec(keys.stdout)?.[1]
    expect(write).toBeDefined()
    const dir = mkdtempSync(join(tmpdir(), 'floe-static-'))
    mkdirSync(join(dir, 'com.acme/e/jsonschema'), { recursive: true })
    writeFileSync(join(dir, 'com.acme/e/jsonschema/1-0-0'), JSON.stringify(schema('com.acme', 'e', '1-0-0')))
    const pushed = await floe(['registry', 'static', 'push', dir, url, write!, '--public'])
    expect(pushed.code).toBe(0)
    expect((await registry.call('GET', '/schemas')).body).toEqual(['iglu:com.acme/e/jsonschema/1-0-0'])
  })
})
