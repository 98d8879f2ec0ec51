import { beforeAll, describe, expect, it } from 'vitest'
import { loadSpec } from '../../../lib/cli/rehearse-sources'
import { checkReferences, dependencyCircle, subNames } from '../../../lib/core/rehearse/references'
import type { Spec } from '../../../lib/core/rehearse/spec'
import type { AssemblyStack, Template } from '../../../lib/core/rehearse/template'

let spec: Spec
beforeAll(async () => { spec = await loadSpec() })

const queue = { Type: 'AWS::SQS::Queue', Properties: {} }
const refs = (template: Template, others: AssemblyStack[] = []) => checkReferences([{ name: 'S', template }, ...others], spec).map((v) => `${v.resource}: ${v.problem}`)

describe('template references', () => {
  it('Ref, Fn::GetAtt and Fn::Sub name resources, parameters or pseudo parameters of the stack', () => {
    const template: Template = {
      Parameters: { Stage: { Type: 'String' } },
      Resources: {
        Q: queue,
        P: { Type: 'AWS::SQS::QueuePolicy', Properties: { Queues: [{ Ref: 'Q' }, { Ref: 'Stage' }, { Ref: 'AWS::StackName' }, { Ref: 'Gone' }], PolicyDocument: { Statement: [{ Resource: [{ 'Fn::GetAtt': ['Q', 'Arn'] }, { 'Fn::GetAtt': 'Gone.Arn' }, { 'Fn::GetAtt': ['Q', 'Url'] }] }] } } },
        S: { Type: 'AWS::SSM::Parameter', Properties: { Type: 'String', Value: { 'Fn::Sub': ['${Q.Arn}:${AWS::Region}:${Stage}:${Mine}:${!Literal}:${Missing}:${Q.Nope}', { Mine: 'x' }] } } },
      },
    }
    expect(refs(template)).toEqual([
      'P: Ref to Gone, which is neither a resource nor a parameter of the stack',
      'P: Fn::GetAtt of Gone, which is not a resource of the stack',
      'P: Fn::GetAtt Q.Url: AWS::SQS::Queue has no attribute Url',
      'S: Ref to Missing, which is neither a resource nor a parameter of the stack',
      'S: Fn::GetAtt Q.Nope: AWS::SQS::Queue has no attribute Nope',
    ])
    expect(subNames('a${X}b${!Y}${ Z.Arn }')).toEqual(['X', 'Z.Arn'])
  })

  it('conditions, mappings and DependsOn name what the stack has', () => {
    const template: Template = {
      Conditions: { Yes: { 'Fn::Equals': ['a', 'a'] } },
      Mappings: { M: { a: { b: 'c' } } },
      Resources: {
        Q: { ...queue, Condition: 'No', DependsOn: ['R', 'Ghost'] },
        R: { Type: 'AWS::SQS::Queue', Properties: { QueueName: { 'Fn::If': ['Maybe', { 'Fn::FindInMap': ['M', 'a', 'b'] }, { 'Fn::FindInMap': ['N', 'a', 'b'] }] } } },
      },
    }
    expect(refs(template)).toEqual([
      'Q: DependsOn Ghost, which is not a resource of the stack',
      'Q: Condition No, which is not a condition of the stack',
      'R: Fn::If on Maybe, which is not a condition of the stack',
      'R: Fn::FindInMap of N, which is not a mapping of the stack',
    ])
  })

  it('Fn::ImportValue names an export of the assembly; two stacks may not export one name', () => {
    const data: AssemblyStack = { name: 'D', template: { Resources: { Q: queue }, Outputs: { A: { Value: { Ref: 'Q' }, Export: { Name: 'D:Queue' } } } } }
    const app: Template = { Resources: { P: { Type: 'AWS::SSM::Parameter', Properties: { Type: 'String', Value: { 'Fn::ImportValue': 'D:Queue' } } }, P2: { Type: 'AWS::SSM::Parameter', Properties: { Type: 'String', Value: { 'Fn::ImportValue': 'D:Missing' } } } }, Outputs: { Again: { Value: 'x', Export: { Name: 'D:Queue' } }, Bad: { Value: { Ref: 'Nope' } } } }
    expect(refs(app, [data])).toEqual([
      '(template): export D:Queue is also exported by S',
      'P2: Fn::ImportValue of D:Missing, which no stack of the assembly exports',
      '(output Bad): Ref to Nope, which is neither a resource nor a parameter of the stack',
    ])
  })

  it('resources that depend on each other in a circle', () => {
    const template: Template = {
      Resources: {
        A: { Type: 'AWS::SQS::Queue', Properties: { QueueName: { 'Fn::GetAtt': ['B', 'QueueName'] } } },
        B: { Type: 'AWS::SQS::Queue', Properties: {}, DependsOn: 'C' },
        C: { Type: 'AWS::SQS::Queue', Properties: { QueueName: { 'Fn::Sub': '${A.QueueName}-c' } } },
      },
    }
    expect(refs(template)).toEqual(['A: circular dependency: A → B → C → A'])
    expect(dependencyCircle(new Map([['a', new Set(['b'])], ['b', new Set<string>()]]))).toBeUndefined()
  })
})
