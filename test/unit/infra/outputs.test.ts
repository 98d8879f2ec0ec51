/** The app stack's outputs: where `floe … --stack <name>` finds a deployment's resources. */
import { describe, expect, it } from 'vitest'
import { declaredOutputs, locationFromOutputs, outputKey } from '../../../lib/infra/outputs'
import { buckets, streams, tables } from '../../../lib/infra/resources'
import { synthTemplates } from '../../support/synth'

describe('app stack outputs', () => {
  it('declares every output the commands read, with the physical name of its resource', () => {
    const { app } = synthTemplates()
    const outputs = app.toJSON().Outputs as Record<string, { Value: unknown }>
    for (const o of declaredOutputs()) expect(Object.keys(outputs)).toContain(o.key)
    // names come from the data stack, through its exports
    expect(JSON.stringify(outputs[outputKey('table', 'apiKeys')]!.Value)).toMatch(/Fn::ImportValue.*ApiKeysTable/)
    expect(JSON.stringify(outputs[outputKey('stream', 'raw')]!.Value)).toMatch(/Fn::ImportValue.*RawStream/)
  })

  it('reads a location back, naming every output that is missing', () => {
    const all: Record<string, string> = Object.fromEntries(declaredOutputs().map((o) => [o.key, `v-${o.key}`]))
    const ok = locationFromOutputs(all)
    expect(ok.ok && ok.value.names.tables.apiKeys).toBe('v-ApiKeysTableName')
    expect(ok.ok && ok.value.names.streams.raw).toBe('v-RawStreamName')
    expect(ok.ok && ok.value.apiUrl).toBe('v-ApiUrl')
    const { ApiUrl: _u, SettingsTableName: _s, ...partial } = all
    expect(locationFromOutputs(partial)).toEqual({ ok: false, missing: ['ApiUrl', 'SettingsTableName'] })
    expect(declaredOutputs()).toHaveLength(1 + Object.keys(tables).length + Object.keys(streams).length + Object.keys(buckets).length)
  })
})
