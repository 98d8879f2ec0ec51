import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { closeTree } from '../../../lib/local/private-files'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const mode = (p: string) => statSync(p).mode & 0o777

describe('closeTree', () => {
  it('removes group and other permissions everywhere under a directory, keeps the owner bits, follows no symbolic link, and says how many', () => {
    const root = mkdtempSync(join(tmpdir(), 'floe-close-'))
    const outside = mkdtempSync(join(tmpdir(), 'floe-close-outside-'))
    dirs.push(root, outside)
    mkdirSync(join(root, 'a', 'b'), { recursive: true })
    writeFileSync(join(root, 'a', 'b', 'object'), 'request data')
    writeFileSync(join(root, 'a', 'run'), '#!/bin/sh\n')
    writeFileSync(join(outside, 'elsewhere'), 'not ours to change')
    symlinkSync(join(outside, 'elsewhere'), join(root, 'a', 'link'))
    for (const [p, m] of [[root, 0o755], [join(root, 'a'), 0o755], [join(root, 'a', 'b'), 0o775], [join(root, 'a', 'b', 'object'), 0o644], [join(root, 'a', 'run'), 0o755], [join(outside, 'elsewhere'), 0o644]] as const) chmodSync(p, m)
    const lines: string[] = []
    expect(closeTree(root, (l) => lines.push(l))).toBe(5)
    expect([mode(root), mode(join(root, 'a')), mode(join(root, 'a', 'b')), mode(join(root, 'a', 'b', 'object')), mode(join(root, 'a', 'run'))]).toEqual([0o700, 0o700, 0o700, 0o600, 0o700])
    expect(mode(join(outside, 'elsewhere'))).toBe(0o644)
    expect(lstatSync(join(root, 'a', 'link')).isSymbolicLink()).toBe(true)
    expect(lines).toEqual([`${root}: 5 entries were open to other users; now closed to them (group and other permissions removed)`])
    // nothing to do the next time, and nothing said
    expect(closeTree(root, (l) => lines.push(l))).toBe(0)
    expect(lines).toHaveLength(1)
  })
})
