import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, type KinesisClient } from '@aws-sdk/client-kinesis'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { makeClients } from '../aws/clients'
import { decodeCollectorPayload } from '../core/thrift/collector-payload'
import { tryShred } from '../core/enrich/shred'
import { localName, streams, type StreamKey } from '../infra/resources'
import type { Command } from './command'
import { usageError, UsageError } from './command'

const USAGE = `tail <stream> [--from-start] [--count N] [--json]`

interface TailOptions {
  readonly stream: StreamKey
  readonly fromStart: boolean
  readonly count?: number
  readonly json: boolean
}

export function parseTailArgs(args: readonly string[]): TailOptions {
  let stream: string | undefined
  let fromStart = false
  let json = false
  let count: number | undefined
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === '--from-start') fromStart = true
    else if (a === '--json') json = true
    else if (a === '--count' || a.startsWith('--count=')) {
      const v = a === '--count' ? args[++i] : a.slice('--count='.length)
      const n = Number(v)
      if (!v || !Number.isInteger(n) || n < 1) throw new UsageError(`--count needs a positive whole number, got '${v ?? ''}'`)
      count = n
    } else if (a.startsWith('-')) throw usageError(USAGE, `unknown option '${a}'`)
    else if (stream === undefined) stream = a
    else throw usageError(USAGE, `unexpected argument '${a}'`)
  }
  if (!stream) throw usageError(USAGE, `which stream? One of: ${Object.keys(streams).join(', ')}`)
  if (!(stream in streams)) throw new UsageError(`unknown stream '${stream}'; streams are: ${Object.keys(streams).join(', ')}`)
  return { stream: stream as StreamKey, fromStart, count, json }
}

interface EndpointsFileLike {
  readonly kinesis: string
  readonly dynamodb: string
  readonly s3: string
  readonly namePrefix?: string
}

/** `endpoints.json` of the running local stack, in `${FLOE_DATA_DIR:-.floe}`. */
export function readEndpointsFile(dir = resolve(process.env.FLOE_DATA_DIR || '.floe')): EndpointsFileLike {
  const file = join(dir, 'endpoints.json')
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    throw new UsageError(`no local stack found (${file} does not exist); start one with 'npx floe start'`)
  }
  return JSON.parse(text) as EndpointsFileLike
}

/** One record as text: a decoded CollectorPayload for Thrift streams, the record itself otherwise. */
export function formatRecord(stream: StreamKey, data: Uint8Array, meta: { shardId: string; sequenceNumber: string; arrival?: Date }, json: boolean): string {
  const format = streams[stream].format
  if (format === 'thrift') {
    const d = decodeCollectorPayload(data)
    if (!d.ok) {
      const base64 = Buffer.from(data).toString('base64')
      return json ? JSON.stringify({ error: d.error, base64 }) : `! undecodable record ${meta.sequenceNumber}: ${d.error} (${base64.slice(0, 60)}…)`
    }
    const p = d.payload
    if (json) return JSON.stringify(p)
    const time = p.timestamp !== undefined ? new Date(p.timestamp).toISOString() : '?'
    const lines = [`${time} ${p.ipAddress ?? '?'} ${p.body !== undefined ? 'POST' : 'GET'} ${p.path ?? '?'}${p.querystring ? `?${p.querystring}` : ''}  nuid=${p.networkUserId ?? '-'}`]
    if (p.userAgent) lines.push(`  user-agent: ${p.userAgent}`)
    if (p.contentType) lines.push(`  content-type: ${p.contentType}`)
    if (p.body !== undefined) lines.push(`  body: ${p.body}`)
    return lines.join('\n')
  }
  const text = Buffer.from(data).toString('utf8')
  if (json) {
    // Enriched and failed events (131-column TSV): shredded as the analytics SDKs do.
    if (format === 'tsv') {
      const shredded = tryShred(text)
      if (shredded.ok) return JSON.stringify(shredded.json)
    }
    if (format === 'json') {
      try {
        return JSON.stringify(JSON.parse(text))
      } catch {
        // fall through: not JSON after all
      }
    }
    return JSON.stringify({ record: text })
  }
  return text
}

export interface TailRun {
  readonly out: (text: string) => void
  /** Kinesis client; built from `endpoints.json` when omitted. */
  readonly kinesis?: KinesisClient
  readonly streamName?: string
  /** Called once the shard iterators are open (records written after this are seen). */
  readonly onReady?: () => void
  readonly signal?: AbortSignal
  readonly pollMs?: number
}

/** Follows a stream and prints each record; resolves after `--count` records or when aborted. */
export async function runTail(args: readonly string[], run: TailRun): Promise<number> {
  const opts = parseTailArgs(args)
  let kinesis = run.kinesis
  let streamName = run.streamName
  if (!kinesis || !streamName) {
    const ep = readEndpointsFile()
    kinesis ??= makeClients({ dynamodb: ep.dynamodb, kinesis: ep.kinesis, s3: ep.s3 }).kinesis
    streamName ??= localName(opts.stream, ep.namePrefix ?? 'floe')
  }
  const shards = (await kinesis.send(new ListShardsCommand({ StreamName: streamName }))).Shards ?? []
  const iterators = new Map<string, string | undefined>()
  for (const s of shards) {
    const it = await kinesis.send(
      new GetShardIteratorCommand({ StreamName: streamName, ShardId: s.ShardId!, ShardIteratorType: opts.fromStart ? 'TRIM_HORIZON' : 'LATEST' }),
    )
    iterators.set(s.ShardId!, it.ShardIterator)
  }
  run.onReady?.()
  let printed = 0
  const pollMs = run.pollMs ?? 250
  while (!run.signal?.aborted) {
    let got = 0
    for (const [shardId, iterator] of iterators) {
      if (!iterator) continue
      const res = await kinesis.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }))
      iterators.set(shardId, res.NextShardIterator)
      for (const r of res.Records ?? []) {
        run.out(formatRecord(opts.stream, r.Data!, { shardId, sequenceNumber: r.SequenceNumber!, arrival: r.ApproximateArrivalTimestamp }, opts.json))
        got++
        if (opts.count !== undefined && ++printed >= opts.count) return 0
      }
    }
    if ([...iterators.values()].every((it) => !it)) return 0
    if (got === 0) {
      await new Promise<void>((resolveWait) => {
        const t = setTimeout(resolveWait, pollMs)
        run.signal?.addEventListener('abort', () => {
          clearTimeout(t)
          resolveWait()
        }, { once: true })
      })
    }
  }
  return 0
}

export const tailCommand: Command = {
  name: 'tail',
  usage: USAGE,
  summary: 'Print the records of a local stream as they arrive (raw: decoded collector payloads; --json: enriched events shredded to JSON, bad rows as JSON). --from-start reads from the oldest record; --count N stops after N.',
  async run(args) {
    const controller = new AbortController()
    const stop = () => controller.abort()
    process.once('SIGINT', stop)
    try {
      return await runTail(args, { out: (t) => process.stdout.write(`${t}\n`), signal: controller.signal })
    } finally {
      process.off('SIGINT', stop)
    }
  },
}
