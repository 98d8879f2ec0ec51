/**
 * Publication rules of a schema group (same vendor and name, any format): the
 * 409 conflicts an Iglu-compatible registry answers, with their exact messages.
 */
import { compareSchemaVer, type SchemaVer } from './keys'

export const CONFLICT = {
  alreadyExists: 'Schema already exists',
  precedingMissing: 'Preceding SchemaVer in the group is missing, check that schemas published in proper order',
  notSequential: 'The schema version is not sequential',
  supersededMissing: 'Superseded schema version(s) do not exist',
  supersededNotBelow: 'Superseded schema version(s) must be below the superseding version',
  publicAfterPrivate: 'Inconsistent schema availability. Cannot add public schema, previous versions are private',
  privateAfterPublic: 'Inconsistent schema availability. Cannot add private schema, previous versions are public',
} as const

/** What the checks need to know about an existing version of the group. */
export interface ExistingVersion {
  readonly format: string
  readonly version: SchemaVer
  readonly isPublic: boolean
}

export interface PublishCandidate {
  readonly format: string
  readonly version: SchemaVer
  readonly isPublic: boolean
  readonly supersedes: readonly SchemaVer[]
}

export type PublishCheck = { ok: true; exists: boolean } | { ok: false; message: string }

const eq = (a: SchemaVer, b: SchemaVer) => compareSchemaVer(a, b) === 0

/**
 * Decides whether `candidate` may be published into a group holding `existing`
 * (all formats of the vendor/name). `exists` tells a patch from a creation.
 */
export function checkPublish(existing: readonly ExistingVersion[], candidate: PublishCandidate, patchesAllowed: boolean): PublishCheck {
  if (existing.length > 0) {
    const allPublic = existing.every((e) => e.isPublic)
    if (candidate.isPublic !== allPublic) {
      return { ok: false, message: candidate.isPublic ? CONFLICT.publicAfterPrivate : CONFLICT.privateAfterPublic }
    }
  }
  const v = candidate.version
  const exists = existing.some((e) => e.format === candidate.format && eq(e.version, v))
  const versions = existing.map((e) => e.version)
  if (!patchesAllowed && versions.some((x) => eq(x, v))) return { ok: false, message: CONFLICT.alreadyExists }

  const { model: m, revision: r, addition: a } = v
  if (a > 0) {
    if (!versions.some((x) => x.model === m && x.revision === r && x.addition === a - 1)) return { ok: false, message: CONFLICT.precedingMissing }
    if (versions.some((x) => x.model === m && x.revision === r + 1)) return { ok: false, message: CONFLICT.notSequential }
  } else if (r > 0) {
    if (!versions.some((x) => x.model === m && x.revision === r - 1)) return { ok: false, message: CONFLICT.precedingMissing }
  } else if (m > 1) {
    if (!versions.some((x) => x.model === m - 1)) return { ok: false, message: CONFLICT.precedingMissing }
  }

  for (const s of candidate.supersedes) {
    if (!versions.some((x) => eq(x, s))) return { ok: false, message: CONFLICT.supersededMissing }
  }
  for (const s of candidate.supersedes) {
    if (compareSchemaVer(s, v) >= 0) return { ok: false, message: CONFLICT.supersededNotBelow }
  }
  return { ok: true, exists }
}

/**
 * Versions whose `supersededBy` must become `newVersion`: those listed in
 * `supersedes`, or already superseded by a listed one (transitively), when
 * they had no superseding version or a lower one.
 */
export function supersedingUpdates(
  group: readonly { version: SchemaVer; supersededBy?: SchemaVer }[],
  supersedes: readonly SchemaVer[],
  newVersion: SchemaVer,
): SchemaVer[] {
  const listed = [...supersedes]
  let grown = true
  while (grown) {
    grown = false
    for (const g of group) {
      if (g.supersededBy && listed.some((l) => eq(l, g.supersededBy!)) && !listed.some((l) => eq(l, g.version))) {
        listed.push(g.version)
        grown = true
      }
    }
  }
  return group
    .filter((g) => listed.some((l) => eq(l, g.version)))
    .filter((g) => !g.supersededBy || compareSchemaVer(g.supersededBy, newVersion) < 0)
    .map((g) => g.version)
}
