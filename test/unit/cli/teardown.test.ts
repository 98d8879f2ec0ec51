import { describe, expect, it } from 'vitest'
import { UsageError } from '../../../lib/cli/command'
import { parseTeardownArgs, teardownFailure } from '../../../lib/cli/teardown'

describe('parseTeardownArgs', () => {
  it('takes the stack, region, profile, --yes and a final snapshot', () => {
    expect(parseTeardownArgs(['--stack', 'FloeApp', '--region', 'eu-west-1', '--profile', 'ops', '--yes', '--final-snapshot=floe-final'])).toEqual({
      target: { stack: 'FloeApp', region: 'eu-west-1', profile: 'ops' },
      yes: true,
      finalSnapshot: 'floe-final',
    })
    expect(parseTeardownArgs(['--stack=FloeData-dev', '-y'])).toEqual({ target: { stack: 'FloeData-dev' }, yes: true })
    expect(parseTeardownArgs(['--stack', 'FloeApp'])).toEqual({ target: { stack: 'FloeApp' }, yes: false })
  })

  it('refuses a missing stack, an unknown option and a malformed snapshot identifier', () => {
    expect(() => parseTeardownArgs(['--yes'])).toThrow(/--stack <name> is required/)
    expect(() => parseTeardownArgs(['--stack', 'FloeApp', '--force'])).toThrow(/unknown option '--force'/)
    expect(() => parseTeardownArgs(['--stack', 'FloeApp', '--final-snapshot'])).toThrow(/needs a snapshot identifier/)
    expect(() => parseTeardownArgs(['--stack', 'FloeApp', '--final-snapshot', 'bad--name'])).toThrow(UsageError)
    expect(() => parseTeardownArgs(['--stack', 'FloeApp', '--final-snapshot', '1st'])).toThrow(/not a DB snapshot identifier/)
  })
})

describe('teardownFailure', () => {
  it('turns network and credential failures into one line each', () => {
    const enotfound = Object.assign(new Error('getaddrinfo ENOTFOUND cloudformation.us-east-1.amazonaws.com'), { code: 'ENOTFOUND' })
    expect(teardownFailure(enotfound, 'FloeApp')).toBe('cannot reach AWS (ENOTFOUND): getaddrinfo ENOTFOUND cloudformation.us-east-1.amazonaws.com (check the network, --region and any proxy)')
    expect(teardownFailure(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }), 'FloeApp')).toMatch(/^no AWS credentials for stack 'FloeApp'/)
    expect(teardownFailure(Object.assign(new Error('User: x is not authorized to perform: cloudformation:DeleteStack'), { name: 'AccessDenied' }), 'FloeApp')).toMatch(/^access denied \(stack 'FloeApp'\)/)
    expect(teardownFailure(Object.assign(new Error('The security token included in the request is expired'), { name: 'ExpiredToken' }), 'FloeApp')).toMatch(/^the AWS credentials were refused \(ExpiredToken\)/)
    expect(teardownFailure(new Error('Region is missing'), 'FloeApp')).toBe("no AWS region for stack 'FloeApp': pass --region or set AWS_REGION")
  })

  it('leaves other errors alone (a Node error code is no network failure)', () => {
    expect(teardownFailure(Object.assign(new Error('bad argument'), { code: 'ERR_INVALID_ARG_TYPE' }), 'FloeApp')).toBeUndefined()
    expect(teardownFailure(Object.assign(new Error('Rate exceeded'), { name: 'Throttling' }), 'FloeApp')).toBeUndefined()
  })
})
