/**
 * Bad rows read back from the archive bucket (see `lib/core/archive.ts`):
 * objects `<bad stream>/YYYY/MM/DD/HH/<shard>-<first>-<last>.gz`, gzip of
 * one bad row per line. A row's id is the search store's (a SHA-256 of its
 * text), so a row found in both places is claimed once.
 */
import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import type { Candidate } from './run'
import { failureTypeOf } from './events'
import type { Selection } from './store'

/** Largest archive object read, once decompressed. */
export const MAX_ARCHIVE_OBJECT_BYTES = 256 * 1024 * 1024

/** The hour an archive key is filed under (epoch ms), or undefined for keys of another shape. */
export function archiveKeyHour(key: string): number | undefined {
  const m = /\/(\d{4})\/(\d{2})\/(\d{2})\/(\d{2})\/[^/]+\.gz$/.exec(key)
  if (!m) return undefined
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]))
  return Number.isFinite(t) ? t : undefined
}

/**
 * Whether an object filed under `hour` may hold rows of the selection's time
 * range. Objects are filed by arrival on the bad stream, at or after the
 * failure: an hour of slack before `since` is not needed, one after `until` is.
 */
export function hourMayMatch(hour: number, s: Selection, slackMs = 3_600_000): boolean {
  if (s.since !== undefined && hour + 3_600_000 <= s.since) return false
  if (s.until !== undefined && hour >= s.until + slackMs) return false
  return true
}

export const badRowId = (line: string): string => createHash('sha256').update(line).digest('hex')

/** The bad rows of one archive object that the selection takes (failure type and time; a query needs the search store). */
export function archiveCandidates(gz: Uint8Array, s: Selection): Candidate[] {
  const text = gunzipSync(gz, { maxOutputLength: MAX_ARCHIVE_OBJECT_BYTES }).toString('utf8')
  const out: Candidate[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '') continue
    let row: { schema?: unknown; data?: { failure?: { timestamp?: unknown } } }
    try {
      row = JSON.parse(line)
    } catch {
      continue
    }
    if (s.failureType !== undefined && failureTypeOf(row.schema) !== s.failureType) continue
    const ts = Date.parse(String(row.data?.failure?.timestamp ?? ''))
    if (s.since !== undefined && !(ts >= s.since)) continue
    if (s.until !== undefined && !(ts < s.until)) continue
    out.push({ id: badRowId(line), line })
  }
  return out
}
