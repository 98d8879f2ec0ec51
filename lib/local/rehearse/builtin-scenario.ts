/**
 * The rehearsal's own scenario, so that a run proves something without the
 * full client scenarios: a tracker's GET `/i` and POST
 * `/com.snowplowanalytics.snowplow/tp2` through the HTTP API, read back
 * from the raw stream; when enrich's mapping runs, the enriched events read
 * back from the good stream; the archive bucket holding what the archive
 * function wrote; the registry's schema list and a page behind the
 * authorizer (401 without credentials); `GET /health` answering 200. Each step waits on the
 * mappings draining (bounded), then reads the data where it landed.
 */
import { randomUUID } from 'node:crypto'
import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, type KinesisClient } from '@aws-sdk/client-kinesis'
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import type { ScenarioOutcome } from '../../core/rehearse/run-report'
import type { ScenarioTarget } from './scenario-target'

/** Every record of a stream, from the start. */
export async function streamRecords(kinesis: KinesisClient, stream: string): Promise<Buffer[]> {
  const out: Buffer[] = []
  const { Shards = [] } = await kinesis.send(new ListShardsCommand({ StreamName: stream }))
  for (const shard of Shards) {
    let { ShardIterator: it } = await kinesis.send(new GetShardIteratorCommand({ StreamName: stream, ShardId: shard.ShardId!, ShardIteratorType: 'TRIM_HORIZON' }))
    while (it) {
      const r = await kinesis.send(new GetRecordsCommand({ ShardIterator: it, Limit: 10_000 }))
      for (const rec of r.Records ?? []) out.push(Buffer.from(rec.Data ?? new Uint8Array()))
      if ((r.Records ?? []).length === 0 || r.MillisBehindLatest === 0) break
      it = r.NextShardIterator
    }
  }
  return out
}

async function step(name: string, f: () => Promise<string | undefined>): Promise<ScenarioOutcome> {
  const start = performance.now()
  try {
    const problem = await f()
    return { name, ok: problem === undefined, ...(problem !== undefined ? { problem } : {}), ms: Math.round(performance.now() - start) }
  } catch (err) {
    return { name, ok: false, problem: (err as Error).message || String(err), ms: Math.round(performance.now() - start) }
  }
}

const named = <T extends { logicalId: string }>(xs: readonly T[], prefix: string) => xs.find((x) => x.logicalId.startsWith(prefix))

/**
 * The archive's check: the mappings drained (the archive function batches
 * for up to its window), then something in the archive bucket. None when
 * the archive function's mapping does not run.
 */
export async function archiveStep(t: ScenarioTarget): Promise<ScenarioOutcome[]> {
  if (!t.mappingsStarted.some((m) => m.function.startsWith('ArchiveFunction'))) return []
  const archive = named(t.resources.buckets, 'ArchiveBucket')
  return [await step('the archive function wrote the streams to the archive bucket', async () => {
    if (!(await t.drain())) return `the mappings did not drain within ${t.waitMs / 1000} s`
    if (!archive) return 'the assembly declares no archive bucket'
    const listed = await t.clients.s3.send(new ListObjectsV2Command({ Bucket: archive.name }))
    return (listed.Contents ?? []).length > 0 ? undefined : `nothing in ${archive.name}`
  })]
}

/** `archiveLater`: leave the archive's check to the caller (`archiveStep`), to run once other scenarios have waited out the archive's window. */
export async function builtInScenario(t: ScenarioTarget, o: { readonly archiveLater?: boolean } = {}): Promise<ScenarioOutcome[]> {
  const aid = `rehearsal-${randomUUID().slice(0, 8)}`
  const out: ScenarioOutcome[] = []
  const raw = named(t.resources.streams, 'RawStream')
  const good = named(t.resources.streams, 'GoodStream')
  const holding = async (stream: string | undefined, least: number) => {
    if (!stream) return 'the assembly declares no such stream'
    const n = (await streamRecords(t.clients.kinesis, stream)).filter((b) => b.includes(aid)).length
    return n >= least ? undefined : `${n} of ${least} events with app ${aid} in ${stream}`
  }

  out.push(await step('tracker GET /i and POST /com.snowplowanalytics.snowplow/tp2 through the HTTP API', async () => {
    const get = await fetch(`${t.url}/i?e=pv&url=${encodeURIComponent('https://shop.example/')}&aid=${aid}&p=web&tv=js-3.0.0&eid=${randomUUID()}`)
    await get.arrayBuffer()
    const now = String(Date.now())
    const post = await fetch(`${t.url}/com.snowplowanalytics.snowplow/tp2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [{ e: 'pv', url: 'https://shop.example/cart', aid, p: 'web', tv: 'js-3.0.0', eid: randomUUID(), dtm: now, stm: now }] }),
    })
    await post.arrayBuffer()
    if (get.status !== 200 || post.status !== 200) return `GET /i answered ${get.status}, POST tp2 answered ${post.status}`
    return holding(raw?.name, 2)
  }))

  const enrichRuns = t.mappingsStarted.some((m) => m.function.startsWith('EnrichFunction'))
  if (enrichRuns) {
    // read back as they land (the archive's batching window, which a drain waits out, is not in this path)
    out.push(await step('the two events enriched onto the good stream', async () => {
      const deadline = Date.now() + t.waitMs
      for (;;) {
        const missing = await holding(good?.name, 2)
        if (missing === undefined || Date.now() > deadline) return missing
        await new Promise((r) => setTimeout(r, 250))
      }
    }))
  }

  if (!o.archiveLater) out.push(...(await archiveStep(t)))

  out.push(await step('the registry lists its schemas; a page behind the authorizer asks for credentials', async () => {
    const schemas = await fetch(`${t.url}/registry-server/api/schemas`)
    const listed = await schemas.text()
    if (schemas.status !== 200) return `GET /registry-server/api/schemas answered ${schemas.status}: ${listed.slice(0, 200)}`
    const home = await fetch(`${t.url}/home`)
    await home.arrayBuffer()
    if (home.status !== 401 || !/^Basic /.test(home.headers.get('www-authenticate') ?? '')) return `GET /home without credentials answered ${home.status} (${home.headers.get('www-authenticate') ?? 'no WWW-Authenticate'})`
    return undefined
  }))

  out.push(await step('GET /health', async () => {
    const r = await fetch(`${t.url}/health`)
    const body = await r.text()
    return r.status === 200 ? undefined : `answered ${r.status}: ${body.slice(0, 200)}`
  }))
  return out
}
