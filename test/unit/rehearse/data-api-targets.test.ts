import { describe, expect, it } from 'vitest'
import { dataApiTargets } from '../../../lib/core/rehearse/data-api-targets'
import { functionInventory } from '../../../lib/core/rehearse/inventory'
import { assemblyResolver } from '../../../lib/core/rehearse/resolve'
import type { AssemblyStack, Template } from '../../../lib/core/rehearse/template'
import { synthTemplates } from '../../support/synth'

describe('the Data API targets of the synthesized stacks', () => {
  const { data, app } = synthTemplates({ searchStore: true })
  const stacks: AssemblyStack[] = [{ name: 'FloeData', template: data.toJSON() as Template }, { name: 'FloeApp', template: app.toJSON() as Template }]
  const resolver = assemblyResolver(stacks)

  it('one cluster, its secret and database, given to the search store\'s writers and readers', () => {
    const targets = dataApiTargets(functionInventory(stacks, resolver))
    expect(targets).toHaveLength(1)
    const t = targets[0]!
    const clusterId = Object.entries(data.toJSON().Resources as Record<string, { Type: string }>).find(([, r]) => r.Type === 'AWS::RDS::DBCluster')![0]
    expect(t.clusterArn).toBe(resolver.physical('FloeData', clusterId)!.attributes.DBClusterArn)
    expect(t.database).toBe('floe')
    expect(t.functions.some((f) => f.startsWith('SearchLoaderFunction'))).toBe(true)
  })

  it('the secret is the ARN of the attached secret, as CloudFormation answers Ref of a SecretTargetAttachment', () => {
    const t = dataApiTargets(functionInventory(stacks, resolver))[0]!
    const secretId = Object.entries(data.toJSON().Resources as Record<string, { Type: string }>).find(([, r]) => r.Type === 'AWS::SecretsManager::Secret')![0]
    expect(t.secretArn).toMatch(/^arn:aws:secretsmanager:us-east-1:000000000000:secret:.+-[A-Z0-9]{6}$/)
    expect(t.secretArn).toBe(resolver.physical('FloeData', secretId)!.ref)
  })
})
