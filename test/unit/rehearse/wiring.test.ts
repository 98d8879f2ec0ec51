import { describe, expect, it } from 'vitest'
import { assemblyResolver } from '../../../lib/core/rehearse/resolve'
import type { AssemblyStack, Template } from '../../../lib/core/rehearse/template'
import { checkWiring, destinationCalls } from '../../../lib/core/rehearse/wiring'
import { synthTemplates } from '../../support/synth'

const { data, app } = synthTemplates()
const project = (): [AssemblyStack, AssemblyStack & { template: { Resources: Record<string, any> } }] => [
  { name: 'FloeData', template: structuredClone(data.toJSON()) as Template },
  { name: 'FloeApp', template: structuredClone(app.toJSON()) as Template & { Resources: Record<string, any> } },
]
const wiring = (stacks: AssemblyStack[]) => checkWiring(stacks, assemblyResolver(stacks))
const idOf = (t: { Resources: Record<string, any> }, re: RegExp) => Object.keys(t.Resources).find((id) => re.test(id))!

describe('wiring of functions to their callers, judged on the templates\' own policies', () => {
  it('today\'s stacks: every mapping\'s role may read its source and write its destination; API Gateway may invoke every route and the authorizer', () => {
    expect(wiring(project())).toEqual([])
  })

  it('a read action taken from a stream-triggered function\'s policy: each of its mappings is refused, naming the role, the action and the stream', () => {
    const stacks = project()
    const appT = stacks[1].template
    const roleId = idOf(appT, /^ArchiveRole[0-9A-F]{8}$/)
    for (const r of Object.values(appT.Resources)) {
      if (r.Type !== 'AWS::IAM::Policy' || r.Properties.Roles?.[0]?.Ref !== roleId) continue
      for (const s of r.Properties.PolicyDocument.Statement) if (Array.isArray(s.Action)) s.Action = s.Action.filter((a: string) => a !== 'kinesis:GetRecords')
    }
    const found = wiring(stacks)
    expect(found).toHaveLength(5)
    for (const v of found) {
      expect(v.stack).toBe('FloeApp')
      expect(v.resource).toMatch(/^ArchiveFunctionKinesisEventSource/)
      expect(v.problem).toMatch(new RegExp(`^the role ${roleId} of ArchiveFunction[0-9A-F]{8} may not kinesis:GetRecords on arn:aws:kinesis:us-east-1:000000000000:stream/FloeData-\\w+Stream[0-9A-F]{8}-[0-9A-Z]{12}: Lambda refuses the mapping$`))
    }
  })

  it('the queue-triggered worker needs its queue\'s receive, delete and attributes', () => {
    const stacks = project()
    const appT = stacks[1].template
    const roleId = idOf(appT, /^RecoverWorkerRole[0-9A-F]{8}$/)
    for (const r of Object.values(appT.Resources)) {
      if (r.Type !== 'AWS::IAM::Policy' || r.Properties.Roles?.[0]?.Ref !== roleId) continue
      for (const s of r.Properties.PolicyDocument.Statement) if (Array.isArray(s.Action)) s.Action = s.Action.filter((a: string) => a !== 'sqs:DeleteMessage')
    }
    expect(wiring(stacks).map((v) => v.problem)).toEqual([expect.stringMatching(/may not sqs:DeleteMessage on arn:aws:sqs:us-east-1:000000000000:FloeApp-RecoverRunsQueue[0-9A-F]{8}-[0-9A-Z]{12}\.fifo: Lambda refuses the mapping$/)])
  })

  it('a route whose invoke permission is gone, and an authorizer whose permission is gone', () => {
    const stacks = project()
    const appT = stacks[1].template
    delete appT.Resources[idOf(appT, /^RouteGEThealthHealthIntegrationPermission[0-9A-F]{8}$/)]
    const authPermission = Object.entries(appT.Resources).find(([, r]) => r.Type === 'AWS::Lambda::Permission' && JSON.stringify(r.Properties.SourceArn).includes('/authorizers/'))![0]
    delete appT.Resources[authPermission]
    const found = wiring(stacks)
    expect(found.filter((v) => /^RouteGEThealth[0-9A-F]{8}$/.test(v.resource)).map((v) => v.problem)).toEqual([expect.stringMatching(/^API Gateway may not invoke HealthFunction[0-9A-F]{8} for GET \/health: no lambda:InvokeFunction permission for apigateway\.amazonaws\.com covers arn:aws:execute-api:us-east-1:000000000000:\w+\/\$default\/GET\/health$/)])
    const authorizerProblems = found.filter((v) => v.problem.startsWith('API Gateway may not invoke the authorizer'))
    expect(authorizerProblems.length).toBeGreaterThan(0)
    expect(new Set(authorizerProblems.map((v) => v.resource)).size).toBe(1)
    expect(found).toHaveLength(1 + authorizerProblems.length)
  })

  it('what a failed batch\'s destination needs', () => {
    expect(destinationCalls('arn:aws:s3:::archive')).toEqual([['s3:PutObject', 'arn:aws:s3:::archive/*'], ['s3:ListBucket', 'arn:aws:s3:::archive']])
    expect(destinationCalls('arn:aws:sqs:us-east-1:000000000000:dlq')).toEqual([['sqs:SendMessage', 'arn:aws:sqs:us-east-1:000000000000:dlq']])
    expect(destinationCalls('arn:aws:sns:us-east-1:000000000000:t')).toEqual([['sns:Publish', 'arn:aws:sns:us-east-1:000000000000:t']])
  })
})
