import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readAssembly } from '../../../lib/cli/rehearse-sources'

const root = mkdtempSync(join(tmpdir(), 'floe-assembly-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const stack = (templateFile: string, environment: string, stackName?: string) => ({ type: 'aws:cloudformation:stack', environment, properties: { templateFile, ...(stackName ? { stackName } : {}) } })

describe('reading a cloud assembly', () => {
  it('its stacks (nested stages included) with their names, regions and template sizes; its asset directories\' sizes and files', () => {
    mkdirSync(join(root, 'assembly-Staging'), { recursive: true })
    mkdirSync(join(root, 'asset.abc', 'lib'), { recursive: true })
    writeFileSync(join(root, 'asset.abc', 'index.mjs'), 'x'.repeat(100))
    writeFileSync(join(root, 'asset.abc', 'lib', 'more.js'), 'y'.repeat(50))
    writeFileSync(join(root, 'manifest.json'), JSON.stringify({ artifacts: {
      Top: stack('Top.template.json', 'aws://unknown-account/unknown-region'),
      Tree: { type: 'cdk:tree', properties: { file: 'tree.json' } },
      Staging: { type: 'cdk:cloud-assembly', properties: { directoryName: 'assembly-Staging' } },
    } }))
    writeFileSync(join(root, 'Top.template.json'), '{"Resources":{}}')
    writeFileSync(join(root, 'assembly-Staging', 'manifest.json'), JSON.stringify({ artifacts: { StagingData: stack('StagingData.template.json', 'aws://123456789012/eu-west-1', 'Staging-Data') } }))
    writeFileSync(join(root, 'assembly-Staging', 'StagingData.template.json'), '{"Resources":{"Q":{"Type":"AWS::SQS::Queue"}}}')
    const a = readAssembly(root)
    expect(a.stacks.map((s) => [s.name, s.region, s.templateBytes, Object.keys(s.template.Resources ?? {})])).toEqual([
      ['Top', undefined, 16, []],
      ['Staging-Data', 'eu-west-1', 46, ['Q']],
    ])
    expect(a.assetBytes).toEqual({ 'asset.abc': 150 })
    expect(a.assetFile('asset.abc', 'lib/more.js')).toBe(true)
    expect(a.assetFile('asset.abc', 'lib/none.js')).toBe(false)
    expect(a.assetFile('asset.abc', '../Top.template.json')).toBe(false)
    expect(a.assetFile('asset.gone', 'index.mjs')).toBeUndefined()
  })

  it('a directory without a manifest is refused with the reason', () => {
    expect(() => readAssembly(join(root, 'nothing'))).toThrow(/is not a cloud assembly \(no readable manifest.json\)/)
  })
})
