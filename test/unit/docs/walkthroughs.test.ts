/**
 * The reader and runner of the docs' walkthroughs (test/support/walkthroughs.ts):
 * markers, expected output, and a broken block failing the run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { docBlocks, expectedOutput, missingOutput, shellSession } from '../../support/walkthroughs'

const dir = mkdtempSync(join(tmpdir(), 'floe-walkthrough-unit-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const PAGE = [
  '# A page',
  '',
  '```sh',
  'echo not in a walkthrough',
  '```',
  '<!-- walkthrough: demo -->',
  '```sh',
  'X=1',
  'echo "x is $X"',
  '# x is 1',
  '```',
  '',
  '<!-- walkthrough wait -->',
  '```sh',
  'echo later',
  '```',
  '<!-- walkthrough skip: needs AWS -->',
  '```sh',
  'cdk deploy',
  '```',
  '<!-- walkthrough end -->',
  '```json',
  '{}',
  '```',
].join('\n')

describe('walkthrough markers', () => {
  it('group the shell blocks under a name, with their wait and skip markers; other blocks belong to none', () => {
    const blocks = docBlocks('page.md', PAGE)
    expect(blocks.map((b) => [b.line, b.lang, b.walkthrough, b.skip, b.wait])).toEqual([
      [3, 'sh', undefined, undefined, false],
      [7, 'sh', 'demo', undefined, false],
      [14, 'sh', 'demo', undefined, true],
      [18, 'sh', 'demo', 'needs AWS', false],
      [22, 'json', undefined, undefined, false],
    ])
  })

  it('are refused when they are not right before a shell block, or a skip gives no reason', () => {
    expect(() => docBlocks('p.md', '<!-- walkthrough wait -->\ntext\n```sh\nls\n```')).toThrow('p.md:1: a walkthrough marker must come right before its block')
    expect(() => docBlocks('p.md', '<!-- walkthrough skip: x -->\n```json\n{}\n```')).toThrow('not a shell block')
    expect(() => docBlocks('p.md', '<!-- walkthrough skip -->\n```sh\nls\n```')).toThrow('gives its reason')
  })
})

describe('expected output', () => {
  it('is the comment lines right after a command; prose comments and inline comments are not', () => {
    const block = ['# prose before the first command', 'curl -s x   # an inline note', '# {"total":1,…}', '', '# prose after a blank line', 'ls', '# a', '# b'].join('\n')
    expect(expectedOutput(block)).toEqual(['{"total":1,…}', 'a', 'b'])
  })

  it('matches whole lines in order, … standing for any text', () => {
    const out = 'pushing 1 schema\n[1/1] created   iglu:com.acme/x/jsonschema/1-0-0\r\n1 schema: 1 created\n200\n'
    expect(missingOutput(['[…] created   iglu:com.acme/x/jsonschema/1-0-0', '200'], out)).toBeUndefined()
    expect(missingOutput(['200', '[…] created   iglu:com.acme/x/jsonschema/1-0-0'], out)).toBe('[…] created   iglu:com.acme/x/jsonschema/1-0-0')
    expect(missingOutput(['20'], out)).toBe('20')
  })
})

describe('a shell session', () => {
  it('carries variables and the directory from block to block, and fails a block at its first failing command', async () => {
    const shell = shellSession({ cwd: dir, env: { PATH: process.env.PATH! }, stateDir: dir })
    expect(await shell.run('mkdir -p sub && cd sub\nGREETING=hello')).toMatchObject({ code: 0 })
    const second = await shell.run('echo "$GREETING from $(basename "$PWD")"')
    expect(second).toMatchObject({ code: 0 })
    expect(missingOutput(expectedOutput('echo\n# hello from sub'), second.output)).toBeUndefined()
    // a broken block: a command that fails in the middle fails the block, whatever comes after it
    const broken = await shell.run('curl -s --fail http://127.0.0.1:1/nothing-listens-here\necho "not reached"')
    expect(broken.code).not.toBe(0)
    expect(broken.output).not.toContain('not reached')
    // and a pipe whose first command fails
    expect((await shell.run('false | cat')).code).not.toBe(0)
  })
})

describe('a documented JSON answer', () => {
  it('is the json block right after a shell block; its stable parts are its scalar members without …', async () => {
    const { answerParts } = await import('../../support/walkthroughs')
    const blocks = docBlocks('p.md', '<!-- walkthrough: w -->\n```sh\ncurl x\n```\n```json\n{"data": [{"id": "5b8f…", "version": 2, "ok": true, "author": "<key id>"}], "message": "a \\"b\\" c", "errors": []}\n```\n')
    expect(blocks[0]!.answer).toBeDefined()
    expect(answerParts(blocks[0]!.answer!)).toEqual(['"version":2', '"ok":true', '"message":"a \\"b\\" c"'])
  })
})
