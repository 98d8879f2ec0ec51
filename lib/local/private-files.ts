/**
 * Files of the local stack that only its user may read: the data directory
 * holds the token signing secret (in DynamoDB Local's database), the pages'
 * credentials, logs with request data and `endpoints.json`, so directories are
 * created 0700 and files written 0600 (an existing file or directory that is
 * looser is tightened when it is written or opened).
 */
import { chmodSync, closeSync, fchmodSync, lstatSync, mkdirSync, openSync, readdirSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'

export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

const posix = process.platform !== 'win32'

/** Creates `dir` (and its parents) 0700; when it exists with a looser mode, tightens it and says so through `log`. */
export function ensurePrivateDir(dir: string, log?: (line: string) => void): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  if (!posix) return
  const mode = statSync(dir).mode & 0o777
  if ((mode & 0o077) === 0) return
  chmodSync(dir, PRIVATE_DIR_MODE)
  log?.(`${dir} was readable by other users (mode ${mode.toString(8).padStart(4, '0')}); its mode is now 0700`)
}

/** Makes the files directly in `dir` (written by an older version, or by a process with a looser umask) 0600, saying how many through `log`. */
export function tightenFiles(dir: string, log?: (line: string) => void): void {
  if (!posix) return
  let tightened = 0
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const st = lstatSync(path)
    if (!st.isFile() || (st.mode & 0o077) === 0) continue
    chmodSync(path, PRIVATE_FILE_MODE)
    tightened++
  }
  if (tightened > 0) log?.(`${dir}: ${tightened} file${tightened === 1 ? ' was' : 's were'} readable by other users; now 0600`)
}

/**
 * Takes every group and other permission off `dir` and everything under it
 * (`chmod -R go-rwx`: symbolic links are not followed), saying how many
 * entries through `log`. One `lstat` an entry; nothing is written when all are
 * closed already.
 */
export function closeTree(dir: string, log?: (line: string) => void): number {
  if (!posix) return 0
  let closed = 0
  const walk = (path: string) => {
    let st
    try {
      st = lstatSync(path)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
      throw err
    }
    if (st.isSymbolicLink()) return
    if ((st.mode & 0o077) !== 0) {
      chmodSync(path, st.mode & 0o700)
      closed++
    }
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  if (closed > 0) log?.(`${dir}: ${closed} entr${closed === 1 ? 'y was' : 'ies were'} open to other users; now closed to them (group and other permissions removed)`)
  return closed
}

/**
 * Sets this process's umask to 077 for good, so that everything it and its
 * children create (the emulators' files, the search store's, logs) is its
 * user's only. Not where the umask cannot be set (a worker thread).
 */
export function keepCreatedFilesPrivate(): void {
  try {
    process.umask(0o077)
  } catch {}
}

/** Opens `path` (`flags` as for `fs.openSync`) as a file only its owner can read or write, also when it existed before. */
export function openPrivateFile(path: string, flags: 'w' | 'a' | 'wx'): number {
  const fd = openSync(path, flags, PRIVATE_FILE_MODE)
  if (posix) {
    try {
      fchmodSync(fd, PRIVATE_FILE_MODE)
    } catch (err) {
      closeSync(fd)
      throw err
    }
  }
  return fd
}

/** Writes `data` to `path`, readable and writable by its owner only (an existing file is tightened before it is written). */
export function writePrivateFile(path: string, data: string): void {
  const fd = openPrivateFile(path, 'w')
  try {
    writeSync(fd, data)
  } finally {
    closeSync(fd)
  }
}

/**
 * Runs `spawn` with the process umask set to 077, so that the child (and what it creates) keeps
 * its files to its owner. The child inherits the umask when it is forked, which `spawn` does
 * synchronously; where the umask cannot be set (a worker thread) `spawn` runs as it is.
 */
export function spawnPrivate<T>(spawn: () => T): T {
  let previous: number | undefined
  try {
    previous = process.umask(0o077)
  } catch {
    previous = undefined
  }
  try {
    return spawn()
  } finally {
    if (previous !== undefined) process.umask(previous)
  }
}
