/**
 * What the authorizing proxy adds to a call: DynamoDB GetItem and S3
 * PutObject (64 KiB) sent by the SDK straight to a minimal upstream, and the
 * same through the proxy (signature read, request classified, one check
 * decided, forwarded, answer relayed), in interleaved rounds so load on the
 * machine hits both alike. Prints each way's median time per call and the
 * difference. `npm run bench -- iam-proxy`
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { startIamProxy } from '../../lib/local/iam-proxy'

const ROUNDS = Number(process.env.ROUNDS || 10)
const PER_ROUND = Number(process.env.PER_ROUND || 100)

// The upstream answers at once: what is measured is the client's and the proxy's work.
const upstream = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    if (req.headers['x-amz-target']) {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' })
      res.end('{"Item":{"pk":{"S":"a"}}}')
    } else {
      res.writeHead(200, { etag: '"e"' })
      res.end()
    }
  })
})
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()))
const target = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
const proxy = await startIamProxy({
  target,
  identities: new Map([['AKIABENCH', { name: 'Bench', policies: null }]]),
  authorize: () => ({ decision: 'allowed' }),
  account: '000000000000',
  region: 'us-east-1',
})

const base = { region: 'us-east-1', credentials: { accessKeyId: 'AKIABENCH', secretAccessKey: 's' }, maxAttempts: 1 }
const clients = (endpoint: string) => ({
  ddb: new DynamoDBClient({ ...base, endpoint }),
  s3: new S3Client({ ...base, endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' as const }),
})
const ways = { direct: clients(target), proxied: clients(proxy.url) }
const body = Buffer.alloc(64 * 1024, 1)

const calls = {
  GetItem: (c: ReturnType<typeof clients>) => c.ddb.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } })),
  PutObject: (c: ReturnType<typeof clients>) => c.s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: body })),
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

for (const [name, call] of Object.entries(calls)) {
  const times: Record<string, number[]> = { direct: [], proxied: [] }
  for (const c of Object.values(ways)) await call(c) // warm up connections and middleware
  for (let round = 0; round < ROUNDS; round++) {
    for (const [way, c] of Object.entries(ways)) {
      const started = performance.now()
      for (let i = 0; i < PER_ROUND; i++) await call(c)
      times[way]!.push(((performance.now() - started) / PER_ROUND) * 1000)
    }
  }
  const d = median(times.direct!)
  const p = median(times.proxied!)
  console.log(`${name}: direct ${d.toFixed(0)} µs/call, through the proxy ${p.toFixed(0)} µs/call (${p >= d ? '+' : '−'}${Math.abs(p - d).toFixed(0)} µs, ${(p / d).toFixed(2)}×), median of ${ROUNDS} rounds of ${PER_ROUND}`)
}
console.log(`checks decided: ${proxy.calls.length}`)

for (const c of Object.values(ways)) {
  c.ddb.destroy()
  c.s3.destroy()
}
await proxy.close()
upstream.close()
