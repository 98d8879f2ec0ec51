/**
 * A CloudFormation endpoint (the rehearsal serves its stacks' resolved
 * outputs with it, so `floe … --stack <name>` finds the rehearsal; tests use
 * it as a deployment's CloudFormation): answers `DescribeStacks` on the AWS
 * query protocol (form-encoded request, XML answer) with the stacks it is
 * given, and `ValidationError` for any other stack name, as CloudFormation does;
 * for stacks given with resources, `ListStackResources`, `GetTemplate` (each
 * resource's `DeletionPolicy`) and `DeleteStack` (answered once `onDelete` has
 * deleted what the stack deletion deletes; then the stack is found by its id
 * only, as `DELETE_COMPLETE`).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeStack {
  readonly name: string
  readonly status?: string
  readonly outputs: Readonly<Record<string, string>>
  readonly resources?: readonly FakeStackResource[]
}

export interface FakeStackResource {
  readonly logicalId: string
  readonly type: string
  readonly physicalId: string
  readonly deletionPolicy?: string
}

export interface DescribeRequest {
  readonly action: string | null
  readonly stackName: string | null
  /** The credential scope of the request's signature: access key id and region. */
  readonly accessKeyId?: string
  readonly region?: string
}

export interface CloudFormationServer {
  readonly url: string
  readonly requests: DescribeRequest[]
  close(): Promise<void>
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

const NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/'

const stackId = (name: string) => `arn:aws:cloudformation:us-east-1:000000000000:stack/${name}/00000000-0000-4000-8000-000000000000`

function resourcesXml(s: FakeStack, deleted: boolean): string {
  const status = (r: FakeStackResource) => (!deleted ? 'CREATE_COMPLETE' : r.deletionPolicy === 'Retain' ? 'DELETE_SKIPPED' : 'DELETE_COMPLETE')
  const members = (s.resources ?? [])
    .map((r) => `<member><LogicalResourceId>${xml(r.logicalId)}</LogicalResourceId><PhysicalResourceId>${xml(r.physicalId)}</PhysicalResourceId><ResourceType>${xml(r.type)}</ResourceType><LastUpdatedTimestamp>2026-01-01T00:00:00.000Z</LastUpdatedTimestamp><ResourceStatus>${status(r)}</ResourceStatus></member>`)
    .join('')
  return `<ListStackResourcesResponse xmlns="${NS}"><ListStackResourcesResult><StackResourceSummaries>${members}</StackResourceSummaries></ListStackResourcesResult><ResponseMetadata><RequestId>00000000-0000-4000-8000-000000000003</RequestId></ResponseMetadata></ListStackResourcesResponse>`
}

function templateXml(s: FakeStack): string {
  const template = { Resources: Object.fromEntries((s.resources ?? []).map((r) => [r.logicalId, { Type: r.type, ...(r.deletionPolicy ? { DeletionPolicy: r.deletionPolicy, UpdateReplacePolicy: r.deletionPolicy } : {}) }])) }
  return `<GetTemplateResponse xmlns="${NS}"><GetTemplateResult><TemplateBody>${xml(JSON.stringify(template))}</TemplateBody><StagesAvailable><member>Original</member><member>Processed</member></StagesAvailable></GetTemplateResult><ResponseMetadata><RequestId>00000000-0000-4000-8000-000000000004</RequestId></ResponseMetadata></GetTemplateResponse>`
}

const emptyXml = (action: string) => `<${action}Response xmlns="${NS}"><ResponseMetadata><RequestId>00000000-0000-4000-8000-000000000005</RequestId></ResponseMetadata></${action}Response>`

function describeXml(s: FakeStack): string {
  const outputs = Object.entries(s.outputs)
    .map(([k, v]) => `<member><OutputKey>${xml(k)}</OutputKey><OutputValue>${xml(v)}</OutputValue></member>`)
    .join('')
  return (
    `<DescribeStacksResponse xmlns="${NS}"><DescribeStacksResult><Stacks><member>` +
    `<StackName>${xml(s.name)}</StackName>` +
    `<StackId>${xml(stackId(s.name))}</StackId>` +
    `<CreationTime>2026-01-01T00:00:00.000Z</CreationTime><StackStatus>${xml(s.status ?? 'CREATE_COMPLETE')}</StackStatus>` +
    `<Outputs>${outputs}</Outputs></member></Stacks></DescribeStacksResult>` +
    `<ResponseMetadata><RequestId>00000000-0000-4000-8000-000000000001</RequestId></ResponseMetadata></DescribeStacksResponse>`
  )
}

function errorXml(code: string, message: string): string {
  return `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${xml(code)}</Code><Message>${xml(message)}</Message></Error><RequestId>00000000-0000-4000-8000-000000000002</RequestId></ErrorResponse>`
}

export async function startCloudFormationServer(stacks: readonly FakeStack[], o: { onDelete?: (stack: FakeStack) => Promise<void> } = {}): Promise<CloudFormationServer> {
  const requests: DescribeRequest[] = []
  const deleted = new Set<string>()
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
      const scope = /Credential=([^/]+)\/\d{8}\/([^/]+)\/cloudformation\//.exec(req.headers.authorization ?? '')
      const r: DescribeRequest = { action: form.get('Action'), stackName: form.get('StackName'), accessKeyId: scope?.[1], region: scope?.[2] }
      requests.push(r)
      const send = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'text/xml' })
        res.end(body)
      }
      if (!['DescribeStacks', 'ListStackResources', 'GetTemplate', 'DeleteStack', 'DescribeStackEvents', 'ListStacks'].includes(r.action ?? '')) return send(400, errorXml('InvalidAction', `Could not find operation ${r.action}`))
      if (r.action === 'ListStacks') {
        const members = stacks
          .filter((x) => deleted.has(x.name))
          .map((x) => `<member><StackId>${xml(stackId(x.name))}</StackId><StackName>${xml(x.name)}</StackName><CreationTime>2026-01-01T00:00:00.000Z</CreationTime><DeletionTime>2026-01-02T00:00:00.000Z</DeletionTime><StackStatus>DELETE_COMPLETE</StackStatus></member>`)
          .join('')
        return send(200, `<ListStacksResponse xmlns="${NS}"><ListStacksResult><StackSummaries>${members}</StackSummaries></ListStacksResult></ListStacksResponse>`)
      }
      // by name, or by stack id (arn:…:stack/<name>/<uuid>); a deleted stack by its id only
      const byId = (r.stackName ?? '').startsWith('arn:')
      const s = stacks.find((x) => x.name === r.stackName || (r.stackName ?? '').includes(`:stack/${x.name}/`))
      if (!s || (deleted.has(s.name) && !byId)) return send(400, errorXml('ValidationError', `Stack with id ${r.stackName} does not exist`))
      if (r.action === 'DescribeStacks') return send(200, describeXml(deleted.has(s.name) ? { ...s, status: 'DELETE_COMPLETE' } : s))
      if (r.action === 'ListStackResources') return send(200, resourcesXml(s, deleted.has(s.name)))
      if (r.action === 'GetTemplate') return send(200, templateXml(s))
      if (r.action === 'DescribeStackEvents') return send(200, `<DescribeStackEventsResponse xmlns="${NS}"><DescribeStackEventsResult><StackEvents></StackEvents></DescribeStackEventsResult></DescribeStackEventsResponse>`)
      if (deleted.has(s.name)) return send(200, emptyXml('DeleteStack'))
      void (o.onDelete?.(s) ?? Promise.resolve()).then(
        () => {
          deleted.add(s.name)
          send(200, emptyXml('DeleteStack'))
        },
        (err: unknown) => send(500, errorXml('InternalFailure', String(err))),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
