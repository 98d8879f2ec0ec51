/**
 * Following `FLOE_IGLU_DIRS`: snapshots of a directory tell which files were
 * added, changed or removed; a check answers the repositories to forget and
 * logs the changed files that cannot be used, with their path and reason.
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { changedFiles, MAX_SCHEMA_FILE_BYTES, schemaFileProblem } from '../../../lib/core/iglu/dir-snapshot'
import { igluDirRepositoryName } from '../../../lib/core/iglu/resolver-config'
import { EmbeddedRepository } from '../../../lib/core/iglu/repositories'
import { Resolver } from '../../../lib/core/iglu/resolver'
import { checkRegistryChanges, followRegistry, resetRegistryChanges } from '../../../lib/runtime/registry-changes'
import { changedIgluDirs, IGLU_DIRS_SCAN_MS, igluDirsReport, resetIgluDirs, snapshotDir } from '../../../lib/runtime/iglu-dirs'

const self = (name: string, version = '1-0-0') => ({ self: { vendor: 'com.acme', name, format: 'jsonschema', version }, type: 'object' })

describe('schema files', () => {
  it('a file is usable when it is JSON, an object, within the limit, and its self names its path', () => {
    const ok = JSON.stringify(self('a'))
    expect(schemaFileProblem('com.acme/a/jsonschema/1-0-0', ok.length, () => ok)).toBeUndefined()
    expect(schemaFileProblem('com.acme/a/jsonschema/1-0-0', 3, () => '{"s')).toMatch(/^it is not valid JSON/)
    expect(schemaFileProblem('com.acme/a/jsonschema/1-0-0', 2, () => '[]')).toBe('it is not a JSON object')
    expect(schemaFileProblem('com.acme/a/jsonschema/1-0-0', 2, () => '{}')).toMatch(/no "self"/)
    expect(schemaFileProblem('com.acme/b/jsonschema/1-0-0', ok.length, () => ok)).toBe('its self.name is "a", but its path says "b"')
    expect(schemaFileProblem('com.acme/a/jsonschema/1-0', ok.length, () => ok)).toMatch(/not a SchemaVer/)
    expect(schemaFileProblem('com.acme/a/jsonschema/1-0-0', MAX_SCHEMA_FILE_BYTES + 1, () => { throw new Error('not read') })).toMatch(/over the registry's limit/)
  })

  it('snapshots differ where a file was added, changed or removed', () => {
    const a = new Map([['x', '1'], ['y', '1']])
    expect(changedFiles(a, new Map(a))).toEqual([])
    expect(changedFiles(a, new Map([['x', '2'], ['z', '1']]))).toEqual(['x', 'y', 'z'])
  })
})

describe('following a directory', () => {
  let dir: string
  const logged: string[] = []
  const write = (rel: string, text: string) => {
    mkdirSync(join(dir, rel, '..'), { recursive: true })
    writeFileSync(join(dir, rel), text)
  }
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'floe-iglu-dirs-unit-'))
    logged.length = 0
    resetIgluDirs()
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))
  const check = () => changedIgluDirs({ FLOE_IGLU_DIRS: dir }, (l) => logged.push(l))
  /** The first check that finds a change once the watcher has reported it (none within 5 s: []). */
  const changed = async () => {
    for (const end = performance.now() + 5_000; performance.now() < end; ) {
      const c = check()
      if (c.length > 0) return c
      await new Promise((r) => setTimeout(r, 5))
    }
    return []
  }
  afterEach(() => resetIgluDirs())

  it('answers the directory when a file was added, changed or removed, and nothing otherwise', async () => {
    write('com.acme/a/jsonschema/1-0-0', JSON.stringify(self('a')))
    const name = igluDirRepositoryName(dir)
    expect(check()).toEqual([name]) // the first look
    expect(check()).toEqual([])
    write('com.acme/b/jsonschema/1-0-0', JSON.stringify(self('b')))
    expect(await changed()).toEqual([name])
    expect(check()).toEqual([])
    write('com.acme/a/jsonschema/1-0-0', JSON.stringify({ ...self('a'), required: ['x'] }))
    expect(await changed()).toEqual([name])
    unlinkSync(join(dir, 'com.acme/b/jsonschema/1-0-0'))
    expect(await changed()).toEqual([name])
    expect(logged).toEqual([])
  })

  it('logs a changed file that cannot be used with its path and reason, once; the start report lists it', async () => {
    write('schemas/com.acme/a/jsonschema/1-0-0', JSON.stringify(self('a')))
    check()
    write('schemas/com.acme/bad/jsonschema/1-0-0', '{"self":')
    await changed()
    expect(logged).toHaveLength(1)
    expect(logged[0]).toContain(join(dir, 'schemas/com.acme/bad/jsonschema/1-0-0'))
    expect(logged[0]).toMatch(/is not used: it is not valid JSON/)
    check()
    expect(logged).toHaveLength(1)
    expect(igluDirsReport({ FLOE_IGLU_DIRS: dir })).toMatchObject({ files: 2, problems: [{ path: join(dir, 'schemas/com.acme/bad/jsonschema/1-0-0'), reason: expect.stringMatching(/not valid JSON/) }], truncated: [] })
    // the snapshot is of the schemas/ directory the repository reads
    expect([...snapshotDir(dir).files.keys()]).toEqual(['com.acme/a/jsonschema/1-0-0', 'com.acme/bad/jsonschema/1-0-0'])
  })

  it('without a watcher, takes a snapshot at most every IGLU_DIRS_SCAN_MS', () => {
    write('com.acme/a/jsonschema/1-0-0', JSON.stringify(self('a')))
    const gone = join(dir, 'not-there-yet')
    const at = (now: number) => changedIgluDirs({ FLOE_IGLU_DIRS: gone }, (l) => logged.push(l), now)
    expect(at(0)).toEqual([igluDirRepositoryName(gone)]) // the first look: nothing to watch
    write('not-there-yet/com.acme/a/jsonschema/1-0-0', JSON.stringify(self('a')))
    expect(at(IGLU_DIRS_SCAN_MS - 1)).toEqual([])
    expect(at(IGLU_DIRS_SCAN_MS)).toEqual([igluDirRepositoryName(gone)])
  })

  it("a file added comes before what a later repository answered, in a resolver that follows the registry", async () => {
    const later = mkdtempSync(join(tmpdir(), 'floe-iglu-dirs-later-'))
    try {
      const put = (root: string, description: string) => {
        mkdirSync(join(root, 'com.acme/a/jsonschema'), { recursive: true })
        writeFileSync(join(root, 'com.acme/a/jsonschema/1-0-0'), JSON.stringify({ ...self('a'), description }))
      }
      put(later, 'from the later repository')
      const resolver = followRegistry(new Resolver({ repositories: [new EmbeddedRepository(dir, { name: igluDirRepositoryName(dir), priority: 1 }), new EmbeddedRepository(later, { name: 'later', priority: 2 })] }))
      const env = { FLOE_IGLU_DIRS: dir }
      const noTable = () => {
        throw new Error('no settings table in this test')
      }
      const description = async () => {
        await checkRegistryChanges(noTable, env)
        const r = await resolver.lookupSchema('iglu:com.acme/a/jsonschema/1-0-0')
        return r.ok ? (r.value as { description?: string }).description : undefined
      }
      expect(await description()).toBe('from the later repository')
      put(dir, 'from FLOE_IGLU_DIRS')
      let seen = await description()
      for (const end = performance.now() + 5_000; seen !== 'from FLOE_IGLU_DIRS' && performance.now() < end; seen = await description()) await new Promise((r) => setTimeout(r, 5))
      expect(seen).toBe('from FLOE_IGLU_DIRS')
    } finally {
      resetRegistryChanges()
      rmSync(later, { recursive: true, force: true })
    }
  })
})
