import { describe, expect, it } from 'vitest'
import { authorizerCacheKey, authorizerVerdict, identityValues, type ApiAuthorizer } from '../../../lib/core/rehearse/http-api'

const event = { headers: { authorization: 'Basic eA==', empty: '' }, queryStringParameters: { token: 't' }, requestContext: { http: { sourceIp: '10.0.0.1' } }, stageVariables: { v: 's' } }
const authorizer = (o: Partial<ApiAuthorizer> = {}): ApiAuthorizer => ({ logicalId: 'A', function: 'F', identitySources: ['$request.header.Authorization'], ttlSeconds: 300, simpleResponses: true, payloadFormat: '2.0', ...o })
const arn = 'arn:aws:execute-api:us-east-1:000000000000:api/$default/GET/home'

describe('HTTP API authorizer decisions', () => {
  it('reads the identity sources of a request; an absent or empty one is missing (401 without invoking the authorizer)', () => {
    expect(identityValues(['$request.header.Authorization', '$request.querystring.token', '$context.http.sourceIp', '$stageVariables.v'], event)).toEqual({ values: ['Basic eA==', 't', '10.0.0.1', 's'] })
    expect(identityValues(['$request.header.X-Key'], event)).toEqual({ missing: '$request.header.X-Key' })
    expect(identityValues(['$request.header.empty'], event)).toEqual({ missing: '$request.header.empty' })
    expect(identityValues([], event)).toEqual({ values: [] })
  })

  it('caches a result only with identity sources and a TTL', () => {
    expect(authorizerCacheKey(authorizer(), ['a'])).toBeDefined()
    expect(authorizerCacheKey(authorizer(), ['a'])).not.toBe(authorizerCacheKey(authorizer(), ['b']))
    expect(authorizerCacheKey(authorizer({ ttlSeconds: 0 }), ['a'])).toBeUndefined()
    expect(authorizerCacheKey(authorizer({ identitySources: [] }), [])).toBeUndefined()
  })

  it('simple responses: isAuthorized true allows with its context, anything else denies', () => {
    expect(authorizerVerdict({ isAuthorized: true, context: { user: 'u' } }, true, arn)).toEqual({ allow: true, context: { user: 'u' } })
    expect(authorizerVerdict({ isAuthorized: 'true' }, true, arn)).toEqual({ allow: false })
    expect(authorizerVerdict(null, true, arn)).toEqual({ allow: false })
  })

  it('IAM policy responses: an Allow of execute-api:Invoke on the route ARN, no Deny', () => {
    const policy = (...Statement: unknown[]) => ({ principalId: 'p', policyDocument: { Version: '2012-10-17', Statement } })
    expect(authorizerVerdict(policy({ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: 'arn:aws:execute-api:us-east-1:000000000000:api/*' }), false, arn)).toEqual({ allow: true, context: {} })
    expect(authorizerVerdict(policy({ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: 'arn:aws:execute-api:us-east-1:000000000000:api/$default/POST/*' }), false, arn)).toEqual({ allow: false })
    expect(authorizerVerdict(policy({ Effect: 'Allow', Action: '*', Resource: '*' }, { Effect: 'Deny', Action: 'execute-api:*', Resource: arn }), false, arn)).toEqual({ allow: false })
  })
})
