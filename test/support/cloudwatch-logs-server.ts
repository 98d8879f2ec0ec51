/**
 * A CloudWatch Logs endpoint for tests: answers `FilterLogEvents` on the AWS
 * JSON 1.1 protocol (`X-Amz-Target: Logs_20140328.FilterLogEvents`) from the
 * events it is given, `startTime` and `endTime` inclusive, in pages of
 * `pageSize` with a `nextToken`, and `ResourceNotFoundException` for a log
 * group it does not have, as CloudWatch Logs does. Every request is recorded
 * with the credential scope of its signature.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeLogEvent {
  readonly timestamp: number
  readonly message: string
  readonly logStreamName?: string
}

export interface LogsRequest {
  readonly target: string | undefined
  readonly contentType: string | undefined
  readonly body: Record<string, unknown>
  /** The credential scope of the request's signature. */
  readonly accessKeyId?: string
  readonly region?: string
  readonly service?: string
}

export interface CloudWatchLogsServer {
  readonly url: string
  readonly requests: LogsRequest[]
  /** Adds events to a log group (creating it), as a function writing would. */
  put(group: string, ...events: FakeLogEvent[]): void
  close(): Promise<void>
}

export async function startCloudWatchLogsServer(groups: Readonly<Record<string, readonly FakeLogEvent[]>>, opts: { pageSize?: number } = {}): Promise<CloudWatchLogsServer> {
  const pageSize = opts.pageSize ?? 3
  const store = new Map<string, { id: string; e: FakeLogEvent }[]>()
  let nextId = 0
  const put = (group: string, ...events: FakeLogEvent[]) => {
    const list = store.get(group) ?? []
    for (const e of events) list.push({ id: String(++nextId).padStart(12, '0'), e })
    store.set(group, list)
  }
  for (const [g, events] of Object.entries(groups)) put(g, ...events)
  const requests: LogsRequest[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const send = (status: number, body: unknown, type?: string) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', ...(type ? { 'x-amzn-errortype': type } : {}) })
        res.end(JSON.stringify(body))
      }
      let body: Record<string, unknown>
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>
      } catch {
        return send(400, { __type: 'SerializationException', message: 'not JSON' }, 'SerializationException')
      }
      const scope = /Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\//.exec(req.headers.authorization ?? '')
      const target = req.headers['x-amz-target'] as string | undefined
      requests.push({ target, contentType: req.headers['content-type'], body, accessKeyId: scope?.[1], region: scope?.[2], service: scope?.[3] })
      if (target !== 'Logs_20140328.FilterLogEvents') return send(400, { __type: 'UnknownOperationException', message: `unknown ${target}` }, 'UnknownOperationException')
      const list = store.get(String(body.logGroupName))
      if (!list) return send(400, { __type: 'ResourceNotFoundException', message: 'The specified log group does not exist.' }, 'ResourceNotFoundException')
      const start = typeof body.startTime === 'number' ? body.startTime : Number.NEGATIVE_INFINITY
      const end = typeof body.endTime === 'number' ? body.endTime : Number.POSITIVE_INFINITY
      const matching = list.filter(({ e }) => e.timestamp >= start && e.timestamp <= end).sort((a, b) => a.e.timestamp - b.e.timestamp)
      const from = typeof body.nextToken === 'string' ? Number(body.nextToken) : 0
      const page = matching.slice(from, from + pageSize)
      send(200, {
        events: page.map(({ id, e }) => ({ logStreamName: e.logStreamName ?? '2026/01/01/[$LATEST]0', timestamp: e.timestamp, ingestionTime: e.timestamp + 1, message: e.message, eventId: id })),
        ...(from + pageSize < matching.length ? { nextToken: String(from + pageSize) } : {}),
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    put,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
