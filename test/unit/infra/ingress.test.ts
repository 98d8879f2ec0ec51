/**
 * The deploy settings that shape cost at volume: the collector's ingress
 * (`-c ingress=apigateway|alb|function-url`), the streams' capacity mode and the
 * enrich function's memory and trigger; the resources each synthesizes, and
 * cdk-nag's AwsSolutions pack over each.
 */
import { App } from 'aws-cdk-lib'
import { Match, Template } from 'aws-cdk-lib/assertions'
import { describe, expect, it } from 'vitest'
import { functions, streamTriggers, triggerSettings } from '../../../lib/infra/functions'
import { streams } from '../../../lib/infra/resources'
import { readSettings } from '../../../lib/infra/settings'
import { FloeAppStack, FloeDataStack } from '../../../lib/infra/stacks'
import { projectRoot } from '../../../lib/local/handlers'
import { nagViolations, synthTemplates } from '../../support/synth'

const DOMAIN = { domainName: 'collector.acme.com', certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc' }

/** Both stacks in us-east-1 (the load balancer's access logs need a region). */
function inRegion(context: Record<string, unknown>) {
  const cdk = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } })
  const env = { region: 'us-east-1' }
  const d = new FloeDataStack(cdk, 'FloeData', { env })
  const a = new FloeAppStack(cdk, 'FloeApp', { env, data: d.data, projectRoot })
  return { cdk, app: Template.fromStack(a) }
}

/** The logical id of the function declared with the `$default` route (the collector). */
function collectorId(t: ReturnType<typeof synthTemplates>['app']): string {
  const ids = Object.keys(t.findResources('AWS::Lambda::Function')).filter((id) => id.startsWith('Collector'))
  expect(ids).toHaveLength(1)
  return ids[0]!
}

describe('-c ingress', () => {
  it('apigateway (default): the HTTP API alone, no function URL, no load balancer', () => {
    const { app } = synthTemplates()
    expect(app.findResources('AWS::Lambda::Url')).toEqual({})
    expect(app.findResources('AWS::ElasticLoadBalancingV2::LoadBalancer')).toEqual({})
    app.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' })
  })

  it('function-url: an unauthenticated URL of the collector function, in the outputs; the HTTP API keeps every route', () => {
    const { app } = synthTemplates({ ingress: 'function-url' })
    const urls = Object.values(app.findResources('AWS::Lambda::Url'))
    expect(urls).toHaveLength(1)
    expect(urls[0].Properties).toMatchObject({ AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': [collectorId(app), 'Arn'] } })
    app.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunctionUrl', Principal: '*', FunctionUrlAuthType: 'NONE' })
    expect(Object.keys(app.findOutputs('CollectorUrl'))).toHaveLength(1)
    expect(Object.keys(app.findResources('AWS::ApiGatewayV2::Route')).length).toBe(Object.values(functions).flatMap((f) => (f as { routes?: unknown[] }).routes ?? []).length)
    expect(app.findResources('AWS::ElasticLoadBalancingV2::LoadBalancer')).toEqual({})
  })

  it('alb: HTTPS on the custom domain to the collector with multi-value headers, HTTP redirected, access logs on; the HTTP API keeps its own endpoint', () => {
    const { app } = inRegion({ ingress: 'alb', ...DOMAIN })
    app.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Scheme: 'internet-facing',
      LoadBalancerAttributes: Match.arrayWith([{ Key: 'routing.http.drop_invalid_header_fields.enabled', Value: 'true' }]),
    })
    app.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      LoadBalancerAttributes: Match.arrayWith([{ Key: 'access_logs.s3.enabled', Value: 'true' }]),
    })
    app.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Port: 443, Protocol: 'HTTPS', Certificates: [{ CertificateArn: DOMAIN.certificateArn }] })
    app.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Port: 80, DefaultActions: [Match.objectLike({ Type: 'redirect', RedirectConfig: Match.objectLike({ Protocol: 'HTTPS', Port: '443' }) })] })
    app.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      TargetType: 'lambda',
      Targets: [{ Id: { 'Fn::GetAtt': [collectorId(app), 'Arn'] } }],
      TargetGroupAttributes: Match.arrayWith([{ Key: 'lambda.multi_value_headers.enabled', Value: 'true' }]),
    })
    app.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunction', Principal: 'elasticloadbalancing.amazonaws.com' })
    expect(Object.keys(app.findOutputs('CollectorLoadBalancerDns'))).toHaveLength(1)
    // the custom domain is the load balancer's, not the HTTP API's
    expect(app.findResources('AWS::ApiGatewayV2::DomainName')).toEqual({})
    expect(app.findResources('AWS::Lambda::Url')).toEqual({})
    // without a region the access logs cannot be set up: said at synth
    expect(() => synthTemplates({ ingress: 'alb', ...DOMAIN })).toThrow(/-c ingress=alb needs the stacks' region/)
  })

  it('keeps cdk-nag clean with each ingress', () => {
    expect(nagViolations({ ingress: 'function-url' }, { env: { region: 'us-east-1' } })).toBe('')
    expect(nagViolations({ ingress: 'alb', ...DOMAIN }, { env: { region: 'us-east-1' } })).toBe('')
  })

  it('refuses an unknown ingress, and a load balancer without a domain and certificate', () => {
    expect(readSettings({ ingress: 'nlb' })).toEqual({ ok: false, errors: ['-c ingress: must be one of apigateway, alb, function-url, got "nlb"'] })
    const r = readSettings({ ingress: 'alb' })
    expect(r.ok).toBe(false)
    expect(!r.ok && r.errors[0]).toMatch(/-c ingress=alb needs -c domainName=<domain> and -c certificateArn/)
  })
})

describe('-c streamMode', () => {
  it('provisioned (default): the declared shards; on-demand: no shard count', () => {
    const { data } = synthTemplates()
    for (const decl of Object.values(streams)) data.hasResourceProperties('AWS::Kinesis::Stream', { ShardCount: decl.shards, StreamModeDetails: { StreamMode: 'PROVISIONED' } })
    const onDemand = synthTemplates({ streamMode: 'on-demand' }).data
    const all = Object.values(onDemand.findResources('AWS::Kinesis::Stream'))
    expect(all).toHaveLength(Object.keys(streams).length)
    for (const s of all) {
      expect(s.Properties.StreamModeDetails).toEqual({ StreamMode: 'ON_DEMAND' })
      expect(s.Properties.ShardCount).toBeUndefined()
    }
    expect(readSettings({ streamMode: 'auto' })).toMatchObject({ ok: false, errors: ['-c streamMode: must be one of provisioned, on-demand, got "auto"'] })
  })
})

describe('enrich settings', () => {
  const enrichMapping = (t: ReturnType<typeof synthTemplates>['app']) => {
    const fnId = Object.keys(t.findResources('AWS::Lambda::Function')).find((id) => id.startsWith('Enrich'))!
    return { fn: t.findResources('AWS::Lambda::Function')[fnId].Properties, mapping: Object.values(t.findResources('AWS::Lambda::EventSourceMapping')).find((m) => m.Properties.FunctionName.Ref === fnId)!.Properties }
  }

  it('default to the declaration and the enrich configuration', () => {
    const { fn, mapping } = enrichMapping(synthTemplates().app)
    const declared = triggerSettings(streamTriggers.find((t) => t.function === 'enrich')!)
    expect(fn.MemorySize).toBe(functions.enrich.memoryMb)
    expect(mapping).toMatchObject({ BatchSize: declared.batchSize, MaximumBatchingWindowInSeconds: 1, ParallelizationFactor: 1 })
  })

  it('set the memory, batch size, batching window and parallelization factor', () => {
    const { fn, mapping } = enrichMapping(synthTemplates({ enrichMemoryMb: '512', enrichBatchSize: '2000', enrichBatchingWindowSeconds: '5', enrichParallelizationFactor: '4' }).app)
    expect(fn.MemorySize).toBe(512)
    expect(mapping).toMatchObject({ BatchSize: 2000, MaximumBatchingWindowInSeconds: 5, ParallelizationFactor: 4 })
  })

  it('are checked, each naming its key', () => {
    const r = readSettings({ enrichMemoryMb: '64', enrichBatchSize: '20000', enrichBatchingWindowSeconds: '301', enrichParallelizationFactor: '11' })
    expect(r.ok).toBe(false)
    expect(!r.ok && r.errors).toEqual([
      '-c enrichBatchSize: must be a whole number from 1 to 10000, got "20000"',
      '-c enrichMemoryMb: must be a whole number from 128 to 10240, got "64"',
      '-c enrichBatchingWindowSeconds: must be a whole number from 0 to 300, got "301"',
      '-c enrichParallelizationFactor: must be a whole number from 1 to 10, got "11"',
    ])
  })
})
