import { describe, expect, it } from 'vitest'
import { stackOutputs } from '../../../lib/core/rehearse/outputs'
import type { AssemblyStack } from '../../../lib/core/rehearse/template'

const data: AssemblyStack = {
  name: 'FloeData',
  template: {
    Resources: { RawStream: { Type: 'AWS::Kinesis::Stream', Properties: { ShardCount: 1 } }, Settings: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: 'floe-settings' } } },
    Outputs: {
      ExportRaw: { Value: { Ref: 'RawStream' }, Export: { Name: 'FloeData:ExportsOutputRefRawStream' } },
    },
  },
}
const app: AssemblyStack = {
  name: 'FloeApp',
  template: {
    Conditions: { Never: { 'Fn::Equals': ['a', 'b'] } },
    Resources: { HttpApi: { Type: 'AWS::ApiGatewayV2::Api', Properties: { Name: 'api' } }, Worker: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: 'floe-worker' } } },
    Outputs: {
      ApiUrl: { Value: { 'Fn::GetAtt': ['HttpApi', 'ApiEndpoint'] } },
      RawStreamName: { Value: { 'Fn::ImportValue': 'FloeData:ExportsOutputRefRawStream' } },
      RecoverFunctionName: { Value: { Ref: 'Worker' } },
      Joined: { Value: { 'Fn::Join': ['/', [{ Ref: 'AWS::Region' }, { Ref: 'AWS::StackName' }]] } },
      Hidden: { Value: 'x', Condition: 'Never' },
      Broken: { Value: { 'Fn::ImportValue': 'Nobody:Exports' } },
    },
  },
}

describe('stack outputs as DescribeStacks answers them', () => {
  it('resolves each output: imports across stacks, refs, joins; the HTTP API endpoint is the one given; a false condition leaves its output out', () => {
    const r = stackOutputs([data, app], { apiUrl: 'http://127.0.0.1:4567' })
    expect(r.outputs.FloeApp).toEqual({
      ApiUrl: 'http://127.0.0.1:4567',
      RawStreamName: expect.stringMatching(/RawStream/),
      RecoverFunctionName: 'floe-worker',
      Joined: 'us-east-1/FloeApp',
    })
    expect(r.outputs.FloeData!.ExportRaw).toBe(r.outputs.FloeApp!.RawStreamName)
    expect(r.problems).toEqual([{ stack: 'FloeApp', output: 'Broken', problem: expect.stringMatching(/Nobody:Exports/) }])
  })

  it('without an endpoint given, the API URL is the one AWS would give', () => {
    expect(stackOutputs([data, app]).outputs.FloeApp!.ApiUrl).toMatch(/^https:\/\/.+\.execute-api\.us-east-1\.amazonaws\.com$/)
  })
})
