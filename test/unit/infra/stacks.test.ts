import { App } from 'aws-cdk-lib'
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions'
import { FloeAppStack, FloeDataStack } from '../../../lib/infra/stacks'
import { projectRoot } from '../../../lib/local/handlers'
import { describe, expect, it, vi } from 'vitest'
import { databases, envVar } from '../../../lib/infra/resources'
import { functions, queueTriggers, streamTriggers, streamTriggerDefaults, triggerSettings } from '../../../lib/infra/functions'
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
    // and the queue triggers (test/unit/infra/recover-worker.test.ts)
    expect(Object.keys(mappings)).toHaveLength(streamTriggers.length + queueTriggers.length)
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

  it('grants each function the access its declaration names', () => {
    const actions = JSON.stringify(Object.values(app.findResources('AWS::IAM::Policy')).map((p) => p.Properties.PolicyDocument.Statement))
    for (const a of ['kinesis:PutRecords', 'kinesis:GetRecords', 'dynamodb:Query', 'dynamodb:PutItem', 's3:PutObject', 's3:GetObject*']) expect(actions).toContain(a)
  })

  it('keeps stateful resources when the stacks are deleted', () => {
    for (const type of ['AWS::DynamoDB::GlobalTable', 'AWS::Kinesis::Stream', 'AWS::S3::Bucket']) {
      for (const r of Object.values(data.findResources(type))) expect(r.DeletionPolicy).toBe('Retain')
    }
  })
})

describe('the search store', () => {
  it('is an Aurora PostgreSQL Serverless v2 cluster that pauses at capacity 0, with the Data API, in a VPC with isolated subnets only', () => {
    data.resourceCountIs('AWS::RDS::DBCluster', 1)
    data.hasResourceProperties('AWS::RDS::DBCluster', {
      Engine: 'aurora-postgresql',
      EnableHttpEndpoint: true,
      DatabaseName: databases.search.databaseName,
      StorageEncrypted: true,
      ServerlessV2ScalingConfiguration: { MinCapacity: 0, MaxCapacity: databases.search.maxCapacity, SecondsUntilAutoPause: databases.search.pauseAfterSeconds },
    })
    data.hasResourceProperties('AWS::RDS::DBInstance', { DBInstanceClass: 'db.serverless' })
    data.resourceCountIs('AWS::EC2::NatGateway', 0)
    data.resourceCountIs('AWS::EC2::InternetGateway', 0)
    for (const r of Object.values(data.findResources('AWS::RDS::DBCluster'))) expect(r.DeletionPolicy).toBe('Retain')
  })

  it('is reached by its functions through the Data API, without a VPC, from a JSON connection descriptor', () => {
    const users = Object.entries(functions).filter(([, f]) => (f as { databases?: object; optionalDatabases?: object }).databases ?? (f as { optionalDatabases?: object }).optionalDatabases).map(([k]) => k)
    expect(users.sort()).toEqual(['controlPlane', 'recoverWorker', 'search', 'searchLoader'])
    const withDb = Object.values(app.findResources('AWS::Lambda::Function')).filter((f) => f.Properties.Environment?.Variables?.[envVar('database', 'search')])
    expect(withDb).toHaveLength(users.length)
    for (const f of withDb) {
      expect(f.Properties.VpcConfig).toBeUndefined()
      expect(JSON.stringify(f.Properties.Environment.Variables[envVar('database', 'search')])).toMatch(/rds-data/)
    }
    const actions = JSON.stringify(Object.values(app.findResources('AWS::IAM::Policy')).map((p) => p.Properties.PolicyDocument.Statement))
    for (const a of ['rds-data:ExecuteStatement', 'rds-data:BeginTransaction', 'secretsmanager:GetSecretValue']) expect(actions).toContain(a)
  })

  it('and everything that uses it are left out with -c searchStore=false', () => {
    const off = synthTemplates({ searchStore: false })
    off.data.resourceCountIs('AWS::RDS::DBCluster', 0)
    off.data.resourceCountIs('AWS::EC2::VPC', 0)
    const users = Object.values(functions).filter((f) => (f as { databases?: object }).databases).length
    expect(Object.keys(off.app.findResources('AWS::Lambda::Function'))).toHaveLength(Object.keys(functions).length - users)
    const routes = Object.values(off.app.findResources('AWS::ApiGatewayV2::Route')).map((r) => String(r.Properties.RouteKey))
    // /micro/validate reads no store: it stays
    expect(routes.filter((r) => /search-store|micro/.test(r))).toEqual(['ANY /micro/validate', 'ANY /micro/validate/{proxy+}'])
    // the control plane stays, without the database (its reset answers that there is no search store)
    const controlPlane = Object.values(off.app.findResources('AWS::Lambda::Function')).filter((f) => /^The control plane under/.test(f.Properties.Description))
    expect(controlPlane).toHaveLength(1)
    expect(controlPlane[0].Properties.Environment.Variables[envVar('database', 'search')]).toBeUndefined()
    expect(Object.keys(off.app.findResources('AWS::Lambda::EventSourceMapping'))).toHaveLength(streamTriggers.filter((t) => t.function !== 'searchLoader').length)
    expect(synthTemplates({ searchStore: 'false' }).data.findResources('AWS::RDS::DBCluster')).toEqual({})
  })
})

describe('a function that cannot run as configured', () => {
  function enrichMapping(licence: string) {
    const before = process.env.ACCEPT_LIMITED_USE_LICENSE
    process.env.ACCEPT_LIMITED_USE_LICENSE = licence
    try {
      const cdkApp = new App({ context: { 'aws:cdk:bundling-stacks': [] } })
      const dataStack = new FloeDataStack(cdkApp, 'D')
      const appStack = new FloeAppStack(cdkApp, 'A', { data: dataStack.data, projectRoot })
      const t = Template.fromStack(appStack)
      const fnIds = Object.keys(t.findResources('AWS::Lambda::Function')).filter((id) => id.startsWith('Enrich'))
      const mapping = Object.values(t.findResources('AWS::Lambda::EventSourceMapping')).find((m) => fnIds.includes(m.Properties.FunctionName.Ref))
      const warnings = Annotations.fromStack(appStack).findWarning('*', Match.stringLikeRegexp('trigger on raw is created disabled'))
      return { enabled: mapping!.Properties.Enabled, warnings: warnings.length }
    } finally {
      if (before === undefined) delete process.env.ACCEPT_LIMITED_USE_LICENSE
      else process.env.ACCEPT_LIMITED_USE_LICENSE = before
    }
  }

  it('gets a disabled stream trigger and a synth warning, and an enabled one once it can run', () => {
    expect(enrichMapping('')).toEqual({ enabled: false, warnings: 1 })
    expect(enrichMapping('yes')).toEqual({ enabled: true, warnings: 0 })
  })
})

describe('deployment settings', () => {
  it("pass the deployer's non-secret settings to the functions that read them, and no secrets", async () => {
    const saved = { ...process.env }
    process.env.FLOE_COLLECTOR_CONFIG = '{"cookie":{"name":"acme"}}'
    process.env.FLOE_SUPER_API_KEY = '3c9e1a44-7b2d-4f60-8e15-9a0b1c2d3e4f'
    try {
      vi.resetModules()
      const { functions } = await import('../../../lib/infra/functions')
      expect(functions.collector.environment).toEqual({ FLOE_COLLECTOR_CONFIG: '{"cookie":{"name":"acme"}}' })
      for (const f of Object.values(functions)) expect(JSON.stringify((f as { environment?: object }).environment ?? {})).not.toContain('3c9e1a44')
    } finally {
      process.env = saved
    }
  })
})

describe('enrichment configuration files', () => {
  it('are synced from FLOE_ENRICHMENTS_DIR to the assets bucket prefix the enrich function reads, before it runs', () => {
    vi.stubEnv('FLOE_ENRICHMENTS_DIR', 'enrichments')
    try {
      const cdk = new App({ context: { 'aws:cdk:bundling-stacks': [] } })
      const d = new FloeDataStack(cdk, 'FloeData')
      const t = Template.fromStack(new FloeAppStack(cdk, 'FloeApp', { data: d.data, projectRoot }))
      t.hasResourceProperties('Custom::CDKBucketDeployment', { DestinationBucketKeyPrefix: 'enrichments/', Prune: true })
      const enrich = Object.entries(t.findResources('AWS::Lambda::Function')).find(([id]) => id.startsWith('EnrichFunction'))!
      expect(enrich[1].DependsOn.some((x: string) => x.startsWith('EnrichmentFiles'))).toBe(true)
    } finally {
      vi.unstubAllEnvs()
    }
    expect(app.findResources('Custom::CDKBucketDeployment')).toEqual({})
  })
})
