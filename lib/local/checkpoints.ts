import { fsyncSync, closeSync, mkdirSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { openPrivateFile, PRIVATE_DIR_MODE } from './private-files'

/**
 * Where a stream consumer records how far it got: per mapping and shard, the
 * sequence number of the last record that is done (processed, or sent to the
 * failure location). There is no lease table: one consumer owns each mapping.
 */
export interface CheckpointStore {
  get(mapping: string, shardId: string): string | undefined
  set(mapping: string, shardId: string, sequenceNumber: string): Promise<void>
}

export class MemoryCheckpointStore implements CheckpointStore {
  protected data: Record<string, Record<string, string>> = {}
  get(mapping: string, shardId: string) {
    return this.data[mapping]?.[shardId]
  }
  async set(mapping: string, shardId: string, sequenceNumber: string) {
    ;(this.data[mapping] ??= {})[shardId] = sequenceNumber
  }
}

/**
 * Checkpoints in a JSON file, replaced atomically (write, fsync, rename) on
 * every change, so a crash at any moment leaves either the old or the new file
 * (0600: only its owner can read it).
 */
export class FileCheckpointStore extends MemoryCheckpointStore {
  private writing: Promise<void> = Promise.resolve()

  constructor(private readonly path: string) {
    super()
    mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE })
    try {
      this.data = JSON.parse(readFileSync(path, 'utf8'))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`Cannot read checkpoints from ${path}: ${(err as Error).message}`)
    }
  }

  override async set(mapping: string, shardId: string, sequenceNumber: string) {
    await super.set(mapping, shardId, sequenceNumber)
    const snapshot = JSON.stringify(this.data, null, 2)
    // Serialise writes so an older snapshot never replaces a newer one.
    this.writing = this.writing.then(() => {
      const tmp = `${this.path}.tmp`
      const fd = openPrivateFile(tmp, 'w')
      try {
        writeSync(fd, snapshot)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
      renameSync(tmp, this.path)
    })
    await this.writing
  }
}
