import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, type KinesisClient, type Shard } from '@aws-sdk/client-kinesis'
import { decodeCollectorPayload } from '../core/thrift/collector-payload'
import { tryShred } from '../core/enrich/shred'
import { streams, type StreamKey } from '../infra/resources'
import type { Command } from './command'
import { usageError, UsageError } from './command'
import { onTarget, resolveTarget, takeTargetOptions, TARGET_USAGE } from './target'

const USAGE = `tail <stream> [--from-start] [--count N] [--json] ${TARGET_USAGE}`

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

export { readEndpointsFile } from './target'

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
  /** Kinesis client; from the target (`--stack`, else `endpoints.json`) when omitted. */
  readonly kinesis?: KinesisClient
  readonly streamName?: string
  /** Called once the shard iterators are open (records written after this are seen). */
  readonly onReady?: () => void
  readonly signal?: AbortSignal
  readonly pollMs?: number
}

/** Every shard of a stream (ListShards is paged). */
async function listShards(kinesis: KinesisClient, streamName: string): Promise<Shard[]> {
  const shards: Shard[] = []
  let token: string | undefined
  do {
    const res = await kinesis.send(new ListShardsCommand(token ? { NextToken: token } : { StreamName: streamName }))
    shards.push(...(res.Shards ?? []))
    token = res.NextToken
  } while (token)
  return shards
}

const THROTTLED = new Set(['ProvisionedThroughputExceededException', 'LimitExceededException', 'ThrottlingException'])

/** Where a shard is read from next: an iterator, or (after an expired one) the last sequence number seen. */
interface ShardCursor {
  iterator?: string
  lastSequence?: string
  /** The shard is closed and read to its end. */
  done: boolean
}

/**
 * Follows a stream and prints each record; resolves after `--count` records or when aborted.
 * Every shard is read: from the tip, the open shards (and the children of any
 * that closes); with `--from-start`, every shard from its oldest record.
 */
export async function runTail(args: readonly string[], run: TailRun): Promise<number> {
  const { target: targetOptions, rest } = takeTargetOptions(args, USAGE)
  const opts = parseTailArgs(rest)
  let kinesis = run.kinesis
  let streamName = run.streamName
  let owned: KinesisClient | undefined
  if (!kinesis || !streamName) {
    const target = await resolveTarget(targetOptions)
    target.ddb.destroy()
    if (!kinesis) kinesis = owned = target.kinesis
    else target.kinesis.destroy()
    streamName ??= target.names.streams[opts.stream]
    try {
      return await onTarget(target, () => follow(kinesis!, streamName!, opts, run))
    } finally {
      owned?.destroy()
    }
  }
  return follow(kinesis, streamName, opts, run)
}

async function follow(kinesis: KinesisClient, streamName: string, opts: TailOptions, run: TailRun): Promise<number> {
  const shards = await listShards(kinesis, streamName)
  const cursors = new Map<string, ShardCursor>()
  const open = async (shardId: string, type: 'TRIM_HORIZON' | 'LATEST' | 'AFTER_SEQUENCE_NUMBER', after?: string) => {
    const it = await kinesis.send(
      new GetShardIteratorCommand({ StreamName: streamName, ShardId: shardId, ShardIteratorType: type, ...(after ? { StartingSequenceNumber: after } : {}) }),
    )
    const c = cursors.get(shardId) ?? { done: false }
    c.iterator = it.ShardIterator
    c.done = !it.ShardIterator
    cursors.set(shardId, c)
  }
  for (const s of shards) {
    const closed = s.SequenceNumberRange?.EndingSequenceNumber !== undefined
    // From the tip, a closed shard has nothing more to give.
    if (!opts.fromStart && closed) continue
    await open(s.ShardId!, opts.fromStart ? 'TRIM_HORIZON' : 'LATEST')
  }
  run.onReady?.()
  let printed = 0
  let pause = run.pollMs ?? 250
  const basePause = pause
  while (!run.signal?.aborted) {
    let got = 0
    let throttled = false
    for (const [shardId, c] of [...cursors]) {
      if (c.done || !c.iterator) continue
      let res
      try {
        res = await kinesis.send(new GetRecordsCommand({ ShardIterator: c.iterator, Limit: 1000 }))
      } catch (err) {
        const name = (err as { name?: string }).name ?? ''
        if (THROTTLED.has(name)) {
          throttled = true
          continue
        }
        if (name === 'ExpiredIteratorException') {
          await open(shardId, c.lastSequence ? 'AFTER_SEQUENCE_NUMBER' : opts.fromStart ? 'TRIM_HORIZON' : 'LATEST', c.lastSequence)
          continue
        }
        throw err
      }
      c.iterator = res.NextShardIterator
      for (const r of res.Records ?? []) {
        c.lastSequence = r.SequenceNumber
        run.out(formatRecord(opts.stream, r.Data!, { shardId, sequenceNumber: r.SequenceNumber!, arrival: r.ApproximateArrivalTimestamp }, opts.json))
        got++
        if (opts.count !== undefined && ++printed >= opts.count) return 0
      }
      if (!c.iterator) {
        // The shard closed (resharding): its children carry on from their start.
        c.done = true
        let children = (res.ChildShards ?? []).map((x) => x.ShardId!).filter(Boolean)
        if (children.length === 0) {
          // not every Kinesis implementation names the children: find them in the shard list
          children = (await listShards(kinesis, streamName)).filter((x) => x.ParentShardId === shardId || x.AdjacentParentShardId === shardId).map((x) => x.ShardId!)
        }
        for (const child of children) if (!cursors.has(child)) await open(child, 'TRIM_HORIZON')
      }
    }
    if ([...cursors.values()].every((c) => c.done)) return 0
    // GetRecords allows five calls a second per shard: back off when throttled, poll again at once while records flow.
    pause = throttled ? Math.min(pause * 2, 5000) : basePause
    if (got === 0 || throttled) {
      await new Promise<void>((resolveWait) => {
        const t = setTimeout(resolveWait, pause)
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
  summary: 'Print the records of a stream of the local stack (or of the deployment of --stack) as they arrive, from every shard (raw: decoded collector payloads; --json: enriched events shredded to JSON, bad rows as JSON). --from-start reads from the oldest record; --count N stops after N.',
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
