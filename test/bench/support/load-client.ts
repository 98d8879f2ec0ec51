/**
 * An HTTP load client in a process of its own, so that measuring a server
 * does not also measure the client in the server's event loop. Takes one JSON
 * job as its argument, prints one JSON result line.
 */
import { Agent, request } from 'node:http'

export interface LoadJob {
  readonly url: string
  readonly method: string
  readonly headers: Record<string, string>
  readonly body: string
  readonly total: number
  readonly concurrency: number
}

export interface LoadResult {
  readonly seconds: number
  readonly statuses: Record<string, number>
  readonly p50Ms: number
  readonly p99Ms: number
  /** The client's own CPU time (user + system) during the run, ms. */
  readonly cpuMs: number
}

async function run(job: LoadJob): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: job.concurrency })
  const statuses: Record<string, number> = {}
  const latencies: number[] = []
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const t0 = process.hrtime.bigint()
      const req = request(job.url, { method: job.method, agent, headers: { ...job.headers, 'content-length': Buffer.byteLength(job.body) } }, (res) => {
        res.resume()
        res.on('end', () => {
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1
          resolve()
        })
      })
      req.on('error', reject)
      req.end(job.body)
    })
  let next = 0
  const cpu0 = process.cpuUsage()
  const started = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (next < job.total) {
        next++
        await one()
      }
    }),
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const cpu = process.cpuUsage(cpu0)
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
  return { seconds, statuses, p50Ms: at(0.5), p99Ms: at(0.99), cpuMs: (cpu.user + cpu.system) / 1000 }
}

if (process.argv[2]) {
  const result = await run(JSON.parse(process.argv[2]) as LoadJob)
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
