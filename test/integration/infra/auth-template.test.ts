/**
 * The synthesized HTTP API puts the basic-authentication authorizer in front
 * of exactly the routes of functions declared with `auth: 'basic'`, and the
 * control plane's other wiring (custom domain, restart generations) is there.
 */
import { describe, expect, it } from 'vitest'
import { functions, type FunctionDecl, type RouteDecl } from '../../../lib/infra/functions'
import { synthTemplates } from '../../support/synth'

describe('the HTTP API in the template', () => {
  const { app } = synthTemplates()

  it('has one Lambda authorizer: simple responses, no identity source, no API Gateway cache', () => {
    const authorizers = Object.values(app.findResources('AWS::ApiGatewayV2::Authorizer'))
    expect(authorizers).toHaveLength(1)
    expect(authorizers[0].Properties).toMatchObject({ AuthorizerType: 'REQUEST', EnableSimpleResponses: true, AuthorizerPayloadFormatVersion: '2.0', IdentitySource: [], AuthorizerResultTtlInSeconds: 0 })
  })

  it('uses it on every route of a function behind basic authentication, and on no other route', () => {
    const routes = Object.values(app.findResources('AWS::ApiGatewayV2::Route')).map((r: any) => r.Properties)
    const expected = new Map<string, boolean>()
    for (const decl of Object.values(functions) as FunctionDecl[]) {
      for (const r of (decl.routes ?? []) as RouteDecl[]) expected.set(r === '$default' ? '$default' : `${r.method} ${r.path}`, decl.auth === 'basic')
    }
    expect(routes).toHaveLength(expected.size)
    for (const r of routes) {
      const guarded = expected.get(r.RouteKey)
      expect(guarded, r.RouteKey).toBeDefined()
      expect(r.AuthorizationType, r.RouteKey).toBe(guarded ? 'CUSTOM' : 'NONE')
    }
    expect([...expected].filter(([, g]) => g).map(([k]) => k)).toEqual(expect.arrayContaining(['ANY /control-plane/{proxy+}', 'GET /metrics', 'GET /home', 'ANY /micro/{proxy+}', 'ANY /search-store']))
  })

  it('maps a custom domain only with both domainName and certificateArn', () => {
    const withDomain = synthTemplates({ domainName: 'collector.acme.com', certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc' }).app
    withDomain.hasResourceProperties('AWS::ApiGatewayV2::DomainName', { DomainName: 'collector.acme.com' })
    withDomain.hasOutput('ApiDomainTarget', {})
    // the API mapping of the domain, and the control plane told the domain (its domain form answers with it)
    withDomain.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 1)
    withDomain.hasResourceProperties('AWS::ApiGatewayV2::DomainName', { DomainNameConfigurations: [{ CertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc', EndpointType: 'REGIONAL' }] })
    const told = Object.values(withDomain.findResources('AWS::Lambda::Function')).map((r: any) => r.Properties).filter((p: any) => p.Environment?.Variables?.FLOE_API_DOMAIN !== undefined)
    expect(told.map((p: any) => p.Environment.Variables.FLOE_API_DOMAIN)).toEqual(['collector.acme.com'])
    expect(String(told[0].Description)).toMatch(/control plane/i)
    expect(Object.values(app.findResources('AWS::Lambda::Function')).some((r: any) => r.Properties.Environment?.Variables?.FLOE_API_DOMAIN !== undefined)).toBe(false)
    expect(Object.keys(app.findResources('AWS::ApiGatewayV2::DomainName'))).toHaveLength(0)
    expect(() => synthTemplates({ domainName: 'collector.acme.com' })).toThrow(/needs both -c domainName=<domain> and -c certificateArn/)
  })
})
