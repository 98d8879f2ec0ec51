/**
 * Lifecycle of an event specification: defaults on create, the next version on
 * edit, and the version squash on publish. Pure functions over records.
 */
import type { ValidSpec } from './validate'
import { lastPublished } from './validate'
import type { HistoryEntry, JsonObject, SpecStatus, StoredSpec } from './types'

export interface Change {
  readonly spec: StoredSpec
  readonly entry: HistoryEntry
  /** History entries removed by this change (versions squashed by a publish). */
  readonly discard: readonly HistoryEntry[]
}

export interface ChangeContext {
  readonly orgId: string
  readonly author: string
  readonly message: string
  readonly now: Date
}

function document(raw: JsonObject, id: string, version: number, status: SpecStatus): JsonObject {
  // Fields the client sent keep their place; id, version and status get their final values.
  return { ...raw, id, version, status }
}

function history(id: string, version: number, status: SpecStatus, doc: JsonObject, ctx: ChangeContext): HistoryEntry {
  return { eventSpecId: id, version, status, author: ctx.author, message: ctx.message, date: ctx.now.toISOString(), snapshot: doc }
}

/** Create: status `draft` and version 0 unless given. */
export function planCreate(raw: JsonObject, valid: ValidSpec, id: string, ctx: ChangeContext): Change {
  const version = valid.version ?? 0
  const status = valid.status ?? 'draft'
  const doc = document(raw, id, version, status)
  const entry = history(id, version, status, doc, ctx)
  const { snapshot: _snapshot, ...latest } = entry
  return { spec: { orgId: ctx.orgId, id, doc, rev: 1, latest }, entry, discard: [] }
}

/** The versions a publish of `version` discards: those between the previous published version and it. */
export function squash(history: readonly HistoryEntry[], version: number): HistoryEntry[] {
  const previous = lastPublished(history.filter((h) => h.version < version))
  if (previous === undefined) return []
  return history.filter((h) => h.version > previous && h.version < version)
}

/** The version an edit gets when it names none: one above every version known. */
export function nextVersion(current: StoredSpec, hist: readonly HistoryEntry[]): number {
  return Math.max(current.latest.version, ...hist.map((h) => h.version)) + 1
}

/**
 * Edit: every edit is a new version (the one given, else one above every version
 * known); status `draft` unless given. Publishing squashes the versions between
 * the previous published version and the new one.
 */
export function planEdit(current: StoredSpec, hist: readonly HistoryEntry[], raw: JsonObject, valid: ValidSpec, ctx: ChangeContext): Change {
  const version = valid.version ?? nextVersion(current, hist)
  const status = valid.status ?? 'draft'
  const doc = document(raw, current.id, version, status)
  const entry = history(current.id, version, status, doc, ctx)
  const { snapshot: _snapshot, ...latest } = entry
  const discard = status === 'published' ? squash(hist, version) : []
  return { spec: { orgId: ctx.orgId, id: current.id, doc, rev: current.rev + 1, latest }, entry, discard }
}
