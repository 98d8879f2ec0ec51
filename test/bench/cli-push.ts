/**
 * `floe registry push` of one schema costs about what starting the command
 * line costs: the command loads its own group only (not the AWS SDK, the
 * local stack or enrich), and its HTTP call is a small part of the time.
 * Measured in separate processes, one after another, against a registry on
 * loopback (the registry service over in-memory stores), each run several
 * times and the medians compared:
 *
 *   node -e 0                      Node itself
 *   floe --version                 Node, tsx and the command line's entry
 *   floe registry push <1 schema>  the same, the registry group and one PUT
 *
 * Pass: push / --version < 1.6 (before the command groups were loaded
 * lazily, a push loaded every group: about 2.3 times --version).
 *
 *   npm run bench -- cli-push
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRegistryService } from '../../lib/core/iglu/service'
import { MemoryKeyStore, MemoryPublisher, MemorySchemaStore } from '../../lib/core/iglu/store'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const LIMIT = 1.6
const SUPER_KEY = 'a8e3c2b1-5d4f-4a6b-9c7d-0e1f2a3b4c5d'

const keys = new MemoryKeyStore()
const registry = createRegistryService({ schemas: new MemorySchemaStore(), keys, superKeys: keys, publisher: new MemoryPublisher(), superApiKey: SUPER_KEY })
const server = createServer(async (req: IncomingMessage, res) => {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const url = new URL(req.url ?? '/', 'http://x')
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v
  const out = await registry({ method: req.method ?? 'GET', path: url.pathname, headers, query: Object.fromEntries(url.searchParams), rawQuery: url.search.slice(1), cookies: [], body: Buffer.concat(chunks), sourceIp: '127.0.0.1', params: {}, timeEpochMs: Date.now() })
  res.writeHead(out.statusCode, out.headers as Record<string, string>)
  res.end(out.body ?? '')
})
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const dir = mkdtempSync(join(tmpdir(), 'floe-bench-push-'))
/** A fresh schema directory per run, so that every push creates (a PUT answered 201). */
function schemaDir(i: number): string {
  const d = join(dir, String(i))
  mkdirSync(join(d, 'com.acme.bench', `e${i}`, 'jsonschema'), { recursive: true })
  const schema = {
    $schema: 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#',
    description: 'A bench event',
    self: { vendor: 'com.acme.bench', name: `e${i}`, format: 'jsonschema', version: '1-0-0' },
    type: 'object',
    properties: { sku: { type: 'string', maxLength: 64 } },
    additionalProperties: false,
  }
  writeFileSync(join(d, 'com.acme.bench', `e${i}`, 'jsonschema', '1-0-0'), JSON.stringify(schema))
  return d
}

/** Milliseconds of one run of a command (it must succeed). */
async function timed(args: string[]): Promise<number> {
  const started = performance.now()
  // asynchronously: the registry answers from this process
  const code = await new Promise<number>((done) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } })
    child.once('exit', (c) => done(c ?? 1))
  })
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}`)
  return performance.now() - started
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const floe = join(root, 'bin/floe.mjs')
const samples = { node: [] as number[], version: [] as number[], push: [] as number[] }
await timed([floe, '--version']) // warms tsx's cache of compiled files
for (let i = 0; i < RUNS; i++) {
  // interleaved, so that a change of the machine's load falls on all three alike
  samples.node.push(await timed(['-e', '0']))
  samples.version.push(await timed([floe, '--version']))
  samples.push.push(await timed([floe, 'registry', 'push', schemaDir(i), base, SUPER_KEY]))
}
server.close()
rmSync(dir, { recursive: true, force: true })

const m = { node: median(samples.node), version: median(samples.version), push: median(samples.push) }
const ratio = m.push / m.version
console.log(`medians of ${RUNS} runs: node -e 0 ${m.node.toFixed(0)} ms · floe --version ${m.version.toFixed(0)} ms · floe registry push (1 schema) ${m.push.toFixed(0)} ms`)
console.log(`push / --version = ${ratio.toFixed(2)} (limit ${LIMIT})`)
if (!(ratio < LIMIT)) {
  console.error(`FAIL: a push of one schema costs ${ratio.toFixed(2)} times starting the command line`)
  process.exit(1)
}
