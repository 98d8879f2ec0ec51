/** The response envelope `{data, includes, errors}` and error entries. */
import { json, type HttpResponse } from '../../http/types'
import type { ErrorEntry, HistoryRecord } from './types'

export const CODES = {
  invalidJson: 'InvalidJson',
  payloadTooLarge: 'PayloadTooLarge',
  invalidRequest: 'InvalidRequest',
  invalidValue: 'InvalidValue',
  invalidIgluUri: 'InvalidIgluUri',
  schemaNotFound: 'SchemaNotFound',
  duplicateEntity: 'DuplicateEntity',
  dataProductNotFound: 'DataProductNotFound',
  nameNotUnique: 'NameNotUnique',
  versionExists: 'VersionExists',
  versionNotAfterPublished: 'VersionNotAfterPublished',
  schemaIncompatible: 'SchemaIncompatible',
  schemaUndecidable: 'SchemaUndecidable',
  notFound: 'NotFound',
  alreadyExists: 'AlreadyExists',
  conflict: 'Conflict',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
} as const

export const error = (code: string, source: string, title: string): ErrorEntry => ({ type: 'Error', code, title, source })
export const warning = (code: string, source: string, title: string): ErrorEntry => ({ type: 'Warning', code, title, source })

export const hasError = (errors: readonly ErrorEntry[]) => errors.some((e) => e.type === 'Error')

/** The text of the top-level `message` of an error body. */
export function summary(errors: readonly ErrorEntry[]): string {
  const list = errors.filter((e) => e.type === 'Error')
  if (list.length === 0) return ''
  const text = (e: ErrorEntry) => (e.reason ? `${e.title}: ${e.reason}` : e.title)
  if (list.length === 1) return text(list[0]!)
  return `${list.length} errors: ${list.map(text).join('; ')}`
}

export type IncludeItem = ({ type: 'History' } & HistoryRecord) | Record<string, unknown>

/** An envelope response; a body with an `Error` entry also carries a top-level `message`. */
export function envelope(status: number, data: readonly unknown[], includes: readonly unknown[] = [], errors: readonly ErrorEntry[] = []): HttpResponse {
  const body: Record<string, unknown> = { data, includes, errors }
  if (hasError(errors)) body.message = summary(errors)
  return json(status, body)
}

/** An error response in the envelope: one `Error` entry and the same text as `message`. */
export function failure(status: number, code: string, source: string, title: string): HttpResponse {
  return envelope(status, [], [], [error(code, source, title)])
}

export function historyInclude(h: HistoryRecord): { type: 'History' } & HistoryRecord {
  return { type: 'History', eventSpecId: h.eventSpecId, version: h.version, status: h.status, author: h.author, message: h.message, date: h.date }
}
