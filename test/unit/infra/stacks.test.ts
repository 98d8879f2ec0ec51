import { Match } from 'aws-cdk-lib/assertions'
import { describe, expect, it } from 'vitest'
import { envVar } from '../../../lib/infra/resources'
import { functions, streamTriggers, streamTriggerDefaults, triggerSettings } from '../../../lib/infra/functions'
import { synthTemplates } from '../../support/synth'

const { app, data } = synthTemplates()

describe('CDK app', () => {
  it('deploys every declared function on Node.js 22, arm64, as bundled ESM', () => {
    const fns = app.findResources('AWS::Lambda::Function')
    expect(Object.keys(fns)).toHaveLength(Object.keys(functions).length)
    for (const fn of Object.values(fns)) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' })
    }
  })

  it('routes every declared path through the HTTP API to its function', () => {
    const routes = Object.values(app.findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey)
    const declared = Object.values(functions).flatMap((f) => ((f as { routes?: readonly unknown[] }).routes ?? []).map((r) => (r === '$default' ? '$default' : `${(r as any).method} ${(r as any).path}`)))
    expect(routes.sort()).toEqual(declared.sort())
  })

  it('maps each stream trigger with the safe defaults: partial failures, bisect, bounded retries and age, S3 on failure', () => {
    const mappings = app.findResources('AWS::Lambda::EventSourceMapping')
    expect(Object.keys(mappings)).toHaveLength(streamTriggers.length)
    for (const t of streamTriggers) {
      const s = triggerSettings(t)
      app.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        BatchSize: s.batchSize,
        MaximumBatchingWindowInSeconds: s.maxBatchingWindowSeconds,
        StartingPosition: s.startingPosition,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: s.retryAttempts,
        MaximumRecordAgeInSeconds: s.maxRecordAgeSeconds,
        ParallelizationFactor: s.parallelizationFactor,
        DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
      })
    }
    expect(streamTriggerDefaults.retryAttempts).toBeGreaterThanOrEqual(0)
    expect(streamTriggerDefaults.maxRecordAgeSeconds).toBeGreaterThan(0)
  })

  it('passes each granted resource name to the function in its environment variable', () => {
    app.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [envVar('bucket', 'archive')]: Match.anyValue(), [envVar('stream', 'raw')]: Match.anyValue() }) },
    })
  })

  it('keeps stateful resources when the stacks are deleted', () => {
    for (const type of ['AWS::DynamoDB::GlobalTable', 'AWS::Kinesis::Stream', 'AWS::S3::Bucket']) {
      for (const r of Object.values(data.findResources(type))) expect(r.DeletionPolicy).toBe('Retain')
    }
  })
})
