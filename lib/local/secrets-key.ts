/**
 * The key that seals the local stack's secrets at rest
 * (`${FLOE_DATA_DIR}/secrets.key`): 32 random bytes, 0600, made at the first
 * start and kept with the data it opens. It is written whole under another
 * name and linked into place, so a start killed at any instant leaves either
 * no key file or a whole one. Its content never goes to a log or the
 * environment (the stack's functions are given its path).
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, fsyncSync, linkSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { readSecretsKey, SECRETS_KEY_BYTES } from '../runtime/secrets-at-rest'
import { ensurePrivateDir, openPrivateFile, PRIVATE_FILE_MODE } from './private-files'

export const SECRETS_KEY_FILE = 'secrets.key'

/** The path of the data directory's key file, made when missing; the file is checked (32 bytes) and kept 0600. */
export function ensureSecretsKey(dataDir: string, log?: (line: string) => void): string {
  ensurePrivateDir(dataDir, log)
  const path = join(dataDir, SECRETS_KEY_FILE)
  // what a start killed before its link left (the data directory has one Floe at a time)
  for (const name of readdirSync(dataDir)) if (name.startsWith(`${SECRETS_KEY_FILE}.`) && name.endsWith('.tmp')) rmSync(join(dataDir, name), { force: true })
  const temporary = `${path}.${process.pid}.tmp`
  const fd = openPrivateFile(temporary, 'w')
  try {
    writeSync(fd, randomBytes(SECRETS_KEY_BYTES))
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    linkSync(temporary, path) // fails when a key is there: it is kept
    syncDir(dataDir) // the link is on disk before any value is sealed with the key
    log?.(`secrets at rest: made ${path}, the key that seals the stored secrets (keep it with the data directory)`)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  } finally {
    rmSync(temporary, { force: true })
  }
  if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) chmodSync(path, PRIVATE_FILE_MODE)
  readSecretsKey(path)
  return path
}

function syncDir(dir: string): void {
  if (process.platform === 'win32') return
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
