/**
 * Records of the tracking-design API: event specifications and their history,
 * organizations and their API keys, data products and source applications.
 */

export type JsonObject = Record<string, unknown>

export const STATUSES = ['draft', 'published', 'deprecated'] as const
export type SpecStatus = (typeof STATUSES)[number]

/** One change of an event specification, as returned in `includes` (`type: "History"`). */
export interface HistoryRecord {
  readonly eventSpecId: string
  readonly version: number
  readonly status: SpecStatus
  /** The API key id whose token made the change. */
  readonly author: string
  readonly message: string
  /** ISO 8601 UTC. */
  readonly date: string
}

/** A history record with the specification as it was written by that change. */
export interface HistoryEntry extends HistoryRecord {
  readonly snapshot: JsonObject
}

/** The current state of an event specification. */
export interface StoredSpec {
  readonly orgId: string
  readonly id: string
  /** The specification as clients see it (`id`, `version`, `status` and every other field sent). */
  readonly doc: JsonObject
  /** Optimistic-concurrency counter, incremented by every write. */
  readonly rev: number
  /** The latest change. */
  readonly latest: HistoryRecord
}

/** An entry of the `errors` array. */
export interface ErrorEntry {
  readonly type: 'Error' | 'Warning'
  readonly code: string
  readonly title: string
  readonly source: string
  /** `SchemaIncompatible`: an instance the event specification accepts and the data structure rejects. */
  readonly witness?: unknown
  /** `SchemaIncompatible`: where and why the data structure rejects the witness, in words. */
  readonly reason?: string
}

export interface Organization {
  readonly id: string
  readonly name: string
  readonly createdAt: string
}

/** An organization API key; only the SHA-256 of the secret is kept. */
export interface OrgApiKey {
  readonly keyId: string
  readonly orgId: string
  readonly hash: string
  readonly createdAt: string
}

/** Data products (`dataProduct`) and source applications (`sourceApp`), kept as client documents. */
export type CatalogKind = 'dataProduct' | 'sourceApp'

/** A name within the data structure (`vendor/name/format`) of `event.source`: what must be unique. */
export interface NameClaim {
  readonly group: string
  readonly name: string
}
