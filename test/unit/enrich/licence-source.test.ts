/** Who accepted the licence: the environment variable, named as such, or enrich's configuration. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { licenceSource } from '../../../lib/core/enrich/config'
import { enrichDeployment } from '../../../lib/core/enrich/deploy'

const dir = mkdtempSync(join(tmpdir(), 'floe-licence-source-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function configFile(name: string, licence: string): string {
  const file = join(dir, `${name}.hocon`)
  writeFileSync(file, `{
  ${licence}
  input { streamName = "raw" }
  output { good { streamName = "good" }, incomplete { streamName = "incomplete" }, bad { streamName = "bad" } }
}`)
  return file
}

describe('the licence source', () => {
  it('is the environment when ACCEPT_LIMITED_USE_LICENSE accepted it, also through the embedded configuration that takes its value', () => {
    expect(enrichDeployment({ ACCEPT_LIMITED_USE_LICENSE: 'yes' }).licenceSource).toBe('environment')
    expect(enrichDeployment({ FLOE_ENRICH_CONFIG: configFile('substituted', 'license { accept = ${?ACCEPT_LIMITED_USE_LICENSE} }'), ACCEPT_LIMITED_USE_LICENSE: 'true' }).licenceSource).toBe('environment')
    expect(licenceSource({ license: { accept: 'YES' } }, { ACCEPT_LIMITED_USE_LICENSE: 'yes' })).toBe('environment')
    expect(licenceSource({}, { ACCEPT_LIMITED_USE_LICENSE: 'yes' })).toBe('environment')
    // a configuration that says no is overruled by the variable, as enrich does
    expect(licenceSource({ license: { accept: false } }, { ACCEPT_LIMITED_USE_LICENSE: 'yes' })).toBe('environment')
  })

  it('is the configuration when its license.accept is its own', () => {
    expect(enrichDeployment({ FLOE_ENRICH_CONFIG: configFile('own', 'license { accept = true }') }).licenceSource).toBe('configuration')
    expect(licenceSource({ license: { accept: true } }, {})).toBe('configuration')
    expect(licenceSource({ license: { accept: true } }, { ACCEPT_LIMITED_USE_LICENSE: 'yes' })).toBe('configuration')
  })

  it('is none without either', () => {
    expect(enrichDeployment({}).licenceSource).toBe('none')
    expect(licenceSource({ license: { accept: false } }, { ACCEPT_LIMITED_USE_LICENSE: 'no' })).toBeUndefined()
  })
})
