import { describe, expect, it } from 'vitest'
import { functions, queueTriggers, streamTriggers } from '../../../lib/infra/functions'
import { functionInventory, invokedFunctionArn } from '../../../lib/core/rehearse/inventory'
import { assemblyResolver } from '../../../lib/core/rehearse/resolve'
import type { AssemblyStack, Template } from '../../../lib/core/rehearse/template'
import { synthTemplates } from '../../support/synth'

const { data, app } = synthTemplates()
const stacks: AssemblyStack[] = [{ name: 'FloeData', template: data.toJSON() as Template }, { name: 'FloeApp', template: app.toJSON() as Template }]
const inventory = functionInventory(stacks, assemblyResolver(stacks))
const pascal = (key: string) => key[0]!.toUpperCase() + key.slice(1)
const find = (key: string) => inventory.find((f) => new RegExp(`^${pascal(key)}Function[0-9A-F]{8}$`).test(f.logicalId))

describe('the functions of the synthesized assembly, as the templates declare them', () => {
  it('every declared function, with its memory, timeout, role and fully resolved environment', () => {
    expect(inventory).toHaveLength(Object.keys(functions).length)
    for (const [key, decl] of Object.entries(functions)) {
      const f = find(key)
      expect(f, key).toBeDefined()
      expect(f!.problems, key).toEqual([])
      expect(f!.memoryMb, key).toBe(decl.memoryMb ?? 128)
      expect(f!.timeoutSeconds, key).toBe(decl.timeoutSeconds ?? 3)
      expect(f!.role, key).toMatch(new RegExp(`^${pascal(key)}Role[0-9A-F]{8}$`))
      expect(f!.handler).toBe('index.handler')
      expect(f!.arn).toBe(`arn:aws:lambda:us-east-1:000000000000:function:${f!.name}`)
      for (const v of Object.values(f!.environment)) expect(v, key).not.toMatch(/Fn::|"Ref"/)
    }
    // a table name in the collector's environment is the settings table's local name
    expect(find('collector')!.environment.FLOE_TABLE_SETTINGS).toMatch(/^FloeData-SettingsTable4DB0CCD0-[0-9A-Z]{12}$/)
  })

  it('each function\'s event source mappings, with their batching, bisect, partial failures and destination', () => {
    const all = inventory.flatMap((f) => f.triggers.map((t) => ({ fn: f.logicalId, ...t })))
    expect(all).toHaveLength(streamTriggers.length + queueTriggers.length)
    for (const key of new Set([...streamTriggers, ...queueTriggers].map((t) => t.function as string))) {
      expect(find(key)!.triggers, key).toHaveLength([...streamTriggers, ...queueTriggers].filter((t) => t.function === key).length)
    }
    const archiveRaw = find('archive')!.triggers.find((t) => t.source.endsWith(`:stream/${stacks[0]!.name}-RawStreamCF061B5E-${t.source.slice(-12)}`))
    expect(archiveRaw).toMatchObject({ kind: 'kinesis', enabled: true, batchSize: 10_000, maxBatchingWindowSeconds: 60, startingPosition: 'TRIM_HORIZON', bisectOnError: true, reportBatchItemFailures: true })
    expect(archiveRaw!.onFailure).toMatch(/^arn:aws:s3:::floedata-archivebucket/)
    expect(find('recoverWorker')!.triggers).toEqual([expect.objectContaining({ kind: 'sqs', batchSize: 1 })])
  })

  it('each route reaches its function through its integration, behind the authorizer where the function asks for basic auth', () => {
    const routes = inventory.flatMap((f) => f.routes)
    expect(routes).toHaveLength(Object.keys(app.findResources('AWS::ApiGatewayV2::Route')).length)
    const authorizer = find('authorizer')!
    for (const [key, decl] of Object.entries(functions) as [string, { routes?: readonly unknown[]; auth?: string }][]) {
      const f = find(key)!
      expect(f.routes.length, key).toBe((decl.routes ?? []).length)
      for (const r of f.routes) {
        expect(r.payloadFormat, `${key} ${r.routeKey}`).toBe('2.0')
        if (decl.auth === 'basic') expect(r, `${key} ${r.routeKey}`).toMatchObject({ authorizationType: 'CUSTOM', authorizer: { function: authorizer.logicalId, payloadFormat: '2.0', simpleResponses: true } })
        else expect(r.authorizer, `${key} ${r.routeKey}`).toBeUndefined()
      }
    }
    expect(find('collector')!.routes.map((r) => r.routeKey)).toContain('$default')
  })

  it('an integration URI names the function it invokes', () => {
    expect(invokedFunctionArn('arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:000000000000:function:f/invocations')).toBe('arn:aws:lambda:us-east-1:000000000000:function:f')
    expect(invokedFunctionArn('arn:aws:lambda:us-east-1:000000000000:function:f')).toBe('arn:aws:lambda:us-east-1:000000000000:function:f')
  })
})
