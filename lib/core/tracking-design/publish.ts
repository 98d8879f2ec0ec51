/**
 * Publishing several event specifications at once (`POST …/event-specs/v1/publish`,
 * what `snowplow-cli dp release` calls): reading the body, the edit a publish
 * amounts to, and naming which listed specification an error entry is about.
 * Pure functions; the service runs them and writes the result.
 */
import { isUuid } from './auth'
import { CODES, error } from './envelope'
import { nextVersion } from './lifecycle'
import type { ErrorEntry, HistoryEntry, JsonObject, StoredSpec } from './types'
import { isObject } from './validate'

/** The history message of a publish when the request gives none. */
export const PUBLISH_MESSAGE = 'Published'

export type PublishBody = { ok: true; ids: string[]; message: string } | { ok: false; errors: ErrorEntry[] }

/**
 * Reads `{"eventSpecIds": ["<uuid>", …], "message"?: "…"}`: a non-empty array of distinct
 * UUIDs (compared case-insensitively, returned in lower case, in the order given).
 * Every problem is reported, not only the first.
 */
export function readPublishBody(body: unknown): PublishBody {
  if (!isObject(body)) return { ok: false, errors: [error(CODES.invalidRequest, 'body', 'The request body must be a JSON object with an eventSpecIds array')] }
  const errors: ErrorEntry[] = []
  const list = body.eventSpecIds
  const ids: string[] = []
  if (list === undefined || list === null) errors.push(error(CODES.invalidRequest, 'eventSpecIds', 'eventSpecIds is required: an array of event specification ids'))
  else if (!Array.isArray(list)) errors.push(error(CODES.invalidRequest, 'eventSpecIds', 'eventSpecIds must be an array of event specification ids'))
  else if (list.length === 0) errors.push(error(CODES.invalidValue, 'eventSpecIds', 'eventSpecIds must list at least one event specification id'))
  else {
    const seen = new Map<string, number>()
    list.forEach((v, i) => {
      const at = `eventSpecIds[${i}]`
      if (typeof v !== 'string') return void errors.push(error(CODES.invalidValue, at, `${at} must be a string, got ${JSON.stringify(v)}`))
      if (!isUuid(v)) return void errors.push(error(CODES.invalidValue, at, `${at} must be an event specification id (a UUID), got ${JSON.stringify(v)}`))
      const id = v.toLowerCase()
      const first = seen.get(id)
      if (first !== undefined) return void errors.push(error(CODES.invalidValue, at, `${at} repeats eventSpecIds[${first}] (${id})`))
      seen.set(id, i)
      ids.push(id)
    })
  }
  if (body.message !== undefined && body.message !== null && typeof body.message !== 'string') errors.push(error(CODES.invalidValue, 'message', 'message must be a string'))
  if (errors.length > 0) return { ok: false, errors }
  return { ok: true, ids, message: typeof body.message === 'string' && body.message !== '' ? body.message : PUBLISH_MESSAGE }
}

/** Whether publishing the specification changes nothing: its latest version is published already. */
export const alreadyPublished = (current: StoredSpec) => current.latest.status === 'published'

/**
 * The `spec` of the edit a publish amounts to: the latest version as stored, with
 * `status: "published"` and the next version number (one above every version known),
 * as `snowplow-cli` itself sends edits. Validated and planned like any edit, so the
 * new version squashes the ones since the previous published version, the latest
 * draft included: its content lives on as the published version.
 */
export function publishSpec(current: StoredSpec, history: readonly HistoryEntry[]): JsonObject {
  // Spreading keeps every field in its place; version and status get their new values.
  return { ...current.doc, version: nextVersion(current, history), status: 'published' }
}

/**
 * An entry about the `index`-th listed specification: its `source` gets the prefix
 * `eventSpecIds[index].` and its title names the specification when it does not already.
 */
export function aboutListed(entry: ErrorEntry, index: number, id: string): ErrorEntry {
  return {
    ...entry,
    source: `eventSpecIds[${index}].${entry.source}`,
    title: entry.title.includes(id) ? entry.title : `Event specification ${id}: ${entry.title}`,
  }
}
