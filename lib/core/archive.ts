import { gzipSync } from 'node:zlib'

/** One stream record as the archive loader sees it. */
export interface ArchiveRecord {
  readonly stream: string
  readonly shardId: string
  readonly sequenceNumber: string
  readonly arrivalMs: number
  readonly data: Buffer
}

export interface ArchiveObject {
  readonly key: string
  readonly body: Buffer
  /** The records it holds, in order. */
  readonly records: readonly ArchiveRecord[]
}

/**
 * Groups a batch into archive objects, one per stream and shard:
 * `<stream>/YYYY/MM/DD/HH/<shard>-<first seq>-<last seq>.gz`, gzip of one line
 * per record (text records as they are, binary records base64-encoded). The key
 * depends only on the records, so writing the same batch again is idempotent.
 */
export function archiveObjects(records: readonly ArchiveRecord[], binary: (stream: string) => boolean): ArchiveObject[] {
  const groups = new Map<string, ArchiveRecord[]>()
  for (const r of records) {
    const k = `${r.stream}\u0000${r.shardId}`
    let g = groups.get(k)
    if (!g) groups.set(k, (g = []))
    g.push(r)
  }
  return [...groups.values()].map((g) => {
    const first = g[0]!
    const last = g.at(-1)!
    const hour = new Date(first.arrivalMs).toISOString().slice(0, 13).replace(/[-T]/g, '/')
    const lines = g.map((r) => (binary(r.stream) ? r.data.toString('base64') : r.data.toString('utf8').replace(/\n$/, '')))
    return {
      key: `${first.stream}/${hour}/${first.shardId}-${first.sequenceNumber}-${last.sequenceNumber}.gz`,
      body: gzipSync(lines.join('\n') + '\n'),
      records: g,
    }
  })
}
