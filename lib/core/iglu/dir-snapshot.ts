/**
 * Following the schema files of `FLOE_IGLU_DIRS` (static layout) without a
 * restart: a snapshot is the signature of every file (size, modification
 * time, inode); two snapshots differ where a file was added, changed or
 * removed. A changed file is checked as the registry checks an upload: JSON,
 * an object, not over the registry's payload limit, its `self` naming the key
 * its path names. Pure: the file system is read by the caller.
 */
import { DEFAULT_MAX_PAYLOAD_SIZE } from './service'

/** The most files followed in one directory (the rest are not followed, and that is reported). */
export const MAX_IGLU_DIR_FILES = 5_000

/** The largest schema file checked (the registry's default payload limit). */
export const MAX_SCHEMA_FILE_BYTES = DEFAULT_MAX_PAYLOAD_SIZE

/** A file's path (relative to its schemas root, `/`-separated) and its signature. */
export type Snapshot = ReadonlyMap<string, string>

/** The files added, changed or removed from `before` to `after`. */
export function changedFiles(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = []
  for (const [path, sig] of after) if (before.get(path) !== sig) out.push(path)
  for (const path of before.keys()) if (!after.has(path)) out.push(path)
  return out.sort()
}

/** Whether a relative path is a schema file of the static layout: `vendor/name/jsonschema/M-R-A`. */
export function isSchemaPath(relPath: string): boolean {
  return /^[^/]+\/[^/]+\/jsonschema\/[^/]+$/.test(relPath)
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Why a schema file cannot be used (a sentence), or undefined when it can. `size` in bytes; `text` is read only when `size` is within the limit. */
export function schemaFileProblem(relPath: string, size: number, text: () => string): string | undefined {
  const [vendor, name, format, version] = relPath.split('/')
  if (!/^[0-9]+-[0-9]+-[0-9]+$/.test(version ?? '')) return `its name is not a SchemaVer (MODEL-REVISION-ADDITION), so no lookup finds it`
  if (size > MAX_SCHEMA_FILE_BYTES) return `it is ${size} bytes, over the registry's limit of ${MAX_SCHEMA_FILE_BYTES}`
  let doc: unknown
  try {
    doc = JSON.parse(text())
  } catch (err) {
    return `it is not valid JSON: ${(err as Error).message}`
  }
  if (!isObject(doc)) return 'it is not a JSON object'
  const self = isObject(doc.self) ? doc.self : undefined
  if (!self) return 'it has no "self" (vendor, name, format, version)'
  const want = { vendor, name, format, version }
  for (const [k, v] of Object.entries(want)) {
    if (self[k] !== v) return `its self.${k} is ${JSON.stringify(self[k])}, but its path says ${JSON.stringify(v)}`
  }
  return undefined
}
