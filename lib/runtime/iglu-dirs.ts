/**
 * The schema directories of `FLOE_IGLU_DIRS`, followed without a restart.
 * Each directory is watched (`fs.watch`, recursive); a check (at the start of
 * a batch or request, with the registry's change counter:
 * `registry-changes.ts`) after the watcher reported an event takes a snapshot
 * of the directory (one `stat` per file, at most `MAX_IGLU_DIR_FILES` files;
 * without a watcher, at most every `IGLU_DIRS_SCAN_MS`); where a file was
 * added, changed or removed since the last snapshot, the resolvers forget
 * what that directory answered, so the batch sees the files as they are now.
 * A changed file that cannot be used is logged with its path and the reason;
 * the others are used.
 */
import { readdirSync, readFileSync, statSync, watch } from 'node:fs'
import { join, resolve } from 'node:path'
import { changedFiles, isSchemaPath, MAX_IGLU_DIR_FILES, schemaFileProblem, type Snapshot } from '../core/iglu/dir-snapshot'
import { igluDirRepositoryName, igluDirs } from '../core/iglu/resolver-config'

export interface DirSnapshot {
  readonly files: Snapshot
  /** More files than `MAX_IGLU_DIR_FILES`: the rest are not followed. */
  readonly truncated: boolean
}

/** The directory an embedded repository reads (`<dir>/schemas` when there is one, as `EmbeddedRepository`). */
function schemasRoot(dir: string): string {
  try {
    if (statSync(join(dir, 'schemas')).isDirectory()) return join(dir, 'schemas')
  } catch {
    // no schemas/ under it: the directory itself
  }
  return dir
}

/** Every file under `dir`'s schemas root, with its signature. */
export function snapshotDir(dir: string): DirSnapshot {
  const root = schemasRoot(resolve(dir))
  const files = new Map<string, string>()
  let truncated = false
  const walk = (abs: string, rel: string, depth: number) => {
    let names: string[]
    try {
      names = readdirSync(abs)
    } catch {
      return
    }
    for (const n of names.sort()) {
      if (n.startsWith('.')) continue
      if (files.size >= MAX_IGLU_DIR_FILES) {
        truncated = true
        return
      }
      const a = join(abs, n)
      const r = rel === '' ? n : `${rel}/${n}`
      let s
      try {
        s = statSync(a)
      } catch {
        continue // removed meanwhile
      }
      if (s.isDirectory()) {
        if (depth < 4) walk(a, r, depth + 1)
      } else if (s.isFile()) files.set(r, `${s.size}:${s.mtimeMs}:${s.ino}`)
    }
  }
  walk(root, '', 0)
  return { files, truncated }
}

/** The schema files of `dir` among `paths` that cannot be used, with why. */
export function problemsOf(dir: string, paths: readonly string[], snapshot: Snapshot): { path: string; reason: string }[] {
  const root = schemasRoot(resolve(dir))
  const out: { path: string; reason: string }[] = []
  for (const p of paths) {
    const sig = snapshot.get(p)
    if (sig === undefined || !isSchemaPath(p)) continue
    const file = join(root, p)
    let reason: string | undefined
    try {
      reason = schemaFileProblem(p, Number(sig.split(':')[0]), () => readFileSync(file, 'utf8'))
    } catch (err) {
      reason = `it cannot be read: ${(err as Error).message}`
    }
    if (reason !== undefined) out.push({ path: file, reason })
  }
  return out
}

/** The schema files of `FLOE_IGLU_DIRS` that cannot be used, and directories followed only in part (for the start log). */
export function igluDirsReport(env: NodeJS.ProcessEnv = process.env): { files: number; problems: { path: string; reason: string }[]; truncated: string[] } {
  let files = 0
  const problems: { path: string; reason: string }[] = []
  const truncated: string[] = []
  for (const d of igluDirs(env.FLOE_IGLU_DIRS)) {
    const s = snapshotDir(d)
    files += s.files.size
    problems.push(...problemsOf(d, [...s.files.keys()], s.files))
    if (s.truncated) truncated.push(d)
  }
  return { files, problems, truncated }
}

/** Without a watcher (or when it failed), the longest time between two snapshots of a directory. */
export const IGLU_DIRS_SCAN_MS = 1_000

interface Followed {
  snapshot: DirSnapshot
  /** The watcher reported a change since the last snapshot. */
  dirty: boolean
  watching: boolean
  scannedAt: number
  close?: () => void
}

const followed = new Map<string, Followed>()

/** Watches a directory's schemas root (recursively): any event marks it dirty. Answers whether it could. */
function watchDir(dir: string, f: Followed): boolean {
  try {
    const w = watch(schemasRoot(resolve(dir)), { recursive: true, persistent: false }, () => {
      f.dirty = true
    })
    w.on('error', () => {
      // gone or unreadable: back to periodic snapshots
      f.watching = false
      f.dirty = true
      w.close()
    })
    f.close = () => w.close()
    return true
  } catch {
    return false
  }
}

/**
 * Follows each directory of `FLOE_IGLU_DIRS`: answers the names of the
 * repositories (`igluDirRepositoryName`) whose files changed since the last
 * call in this process (all of them at the first call), and logs the changed
 * files that cannot be used. A snapshot is taken when the directory's watcher
 * (`fs.watch`, recursive) reported an event since the last one, or, without a
 * watcher, when the last one is `IGLU_DIRS_SCAN_MS` old.
 */
export function changedIgluDirs(env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = (l) => console.error(l), now: number = Date.now()): string[] {
  const changed: string[] = []
  for (const d of igluDirs(env.FLOE_IGLU_DIRS)) {
    let f = followed.get(d)
    if (f !== undefined && !f.dirty && (f.watching || now - f.scannedAt < IGLU_DIRS_SCAN_MS)) continue
    const first = f === undefined
    if (f === undefined) {
      f = { snapshot: { files: new Map(), truncated: false }, dirty: false, watching: false, scannedAt: now }
      followed.set(d, f)
      // watching first: an event between the snapshot below and the watch's start is not missed
      f.watching = watchDir(d, f)
    }
    f.dirty = false
    f.scannedAt = now
    const before = f.snapshot
    const after = snapshotDir(d)
    f.snapshot = after
    const paths = first ? [...after.files.keys()] : changedFiles(before.files, after.files)
    if (!first && paths.length === 0) continue
    changed.push(igluDirRepositoryName(d))
    for (const p of problemsOf(d, paths, after.files)) log(JSON.stringify({ level: 'WARN', message: `FLOE_IGLU_DIRS: ${p.path} is not used: ${p.reason}` }))
    if (after.truncated && !before.truncated) log(JSON.stringify({ level: 'WARN', message: `FLOE_IGLU_DIRS: ${d} has more than ${MAX_IGLU_DIR_FILES} files; only the first ${MAX_IGLU_DIR_FILES} are followed for changes` }))
  }
  return changed
}

/** For tests: forget the snapshots. */
export function resetIgluDirs(): void {
  for (const f of followed.values()) f.close?.()
  followed.clear()
}
