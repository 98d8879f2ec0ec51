/**
 * Local physical identities for the resources of a template: what `Ref`
 * and `Fn::GetAtt` give for each, as CloudFormation would give them, with
 * account 000000000000 by default. A resource that sets its own name
 * (`TableName`, `QueueName`…) keeps it; any other gets a name the way
 * CloudFormation makes one: stack name, logical ID and a suffix.
 */
import type { TemplateResource } from './template'

export const LOCAL_ACCOUNT = '000000000000'

/** What `Ref` answers, and the attributes `Fn::GetAtt` answers, for one resource. */
export interface Physical {
  readonly ref: string
  readonly attributes: Readonly<Record<string, string>>
}

export interface Place {
  readonly partition: string
  readonly region: string
  readonly account: string
  readonly urlSuffix: string
}

/** The property that names each type of resource, when the template sets it. */
const NAME_PROPERTY: Readonly<Record<string, string>> = {
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::DynamoDB::GlobalTable': 'TableName',
  'AWS::Kinesis::Stream': 'Name',
  'AWS::S3::Bucket': 'BucketName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::IAM::Policy': 'PolicyName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::SecretsManager::Secret': 'Name',
  'AWS::RDS::DBCluster': 'DBClusterIdentifier',
  'AWS::Events::Rule': 'Name',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::SSM::Parameter': 'Name',
  'AWS::Lambda::LayerVersion': 'LayerName',
  'AWS::ApiGatewayV2::Api': 'Name',
  'AWS::Scheduler::Schedule': 'Name',
}

/** Longest name CloudFormation generates for a type (its service's limit). */
const NAME_LIMIT: Readonly<Record<string, number>> = {
  'AWS::Lambda::Function': 64,
  'AWS::IAM::Role': 64,
  'AWS::S3::Bucket': 63,
  'AWS::SQS::Queue': 80,
  'AWS::SNS::Topic': 256,
  'AWS::Events::Rule': 64,
  'AWS::RDS::DBCluster': 63,
}

/** A short deterministic suffix (FNV-1a, base 36, upper case), as CloudFormation's random one looks. */
function suffix(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  let h2 = h ^ 0x5bd1e995
  for (let i = text.length - 1; i >= 0; i--) {
    h2 ^= text.charCodeAt(i)
    h2 = Math.imul(h2, 0x01000193) >>> 0
  }
  return (h.toString(36) + h2.toString(36)).toUpperCase().padEnd(12, '0').slice(0, 12)
}

/** The name CloudFormation would generate: `<stack>-<logicalId>-<SUFFIX>`, cut to the type's limit (lower case for buckets). */
export function generatedName(stack: string, logicalId: string, type: string): string {
  const limit = NAME_LIMIT[type] ?? 128
  const tail = `-${suffix(`${stack}/${logicalId}`)}`
  const head = `${stack}-${logicalId}`.slice(0, Math.max(1, limit - tail.length))
  const name = `${head}${tail}`
  return type === 'AWS::S3::Bucket' ? name.toLowerCase() : name
}

/** The property naming a resource of `type`, if the type has one. */
export function nameProperty(type: string): string | undefined {
  return NAME_PROPERTY[type]
}

/**
 * The physical identity of one resource, given its name (the one it sets, or
 * a generated one) and where it lives.
 */
export function physicalOf(type: string, name: string, p: Place, resource?: TemplateResource): Physical {
  const { partition: pt, region: r, account: a, urlSuffix: u } = p
  const arn = (service: string, rest: string, region = r, account = a) => `arn:${pt}:${service}:${region}:${account}:${rest}`
  switch (type) {
    case 'AWS::DynamoDB::Table':
    case 'AWS::DynamoDB::GlobalTable': {
      const tableArn = arn('dynamodb', `table/${name}`)
      return { ref: name, attributes: { Arn: tableArn, StreamArn: `${tableArn}/stream/1970-01-01T00:00:00.000`, TableId: suffix(name) } }
    }
    case 'AWS::Kinesis::Stream':
      return { ref: name, attributes: { Arn: arn('kinesis', `stream/${name}`) } }
    case 'AWS::S3::Bucket':
      return { ref: name, attributes: { Arn: `arn:${pt}:s3:::${name}`, DomainName: `${name}.s3.${u}`, RegionalDomainName: `${name}.s3.${r}.${u}`, WebsiteURL: `http://${name}.s3-website-${r}.${u}` } }
    case 'AWS::SQS::Queue': {
      const fifo = resource?.Properties?.FifoQueue === true || resource?.Properties?.FifoQueue === 'true'
      const q = fifo && !name.endsWith('.fifo') ? `${name}.fifo` : name
      const url = `https://sqs.${r}.${u}/${a}/${q}`
      return { ref: url, attributes: { Arn: arn('sqs', q), QueueName: q, QueueUrl: url } }
    }
    case 'AWS::SNS::Topic': {
      const t = arn('sns', name)
      return { ref: t, attributes: { TopicArn: t, TopicName: name } }
    }
    case 'AWS::Lambda::Function':
      return { ref: name, attributes: { Arn: arn('lambda', `function:${name}`) } }
    case 'AWS::Lambda::Alias':
    case 'AWS::Lambda::Version':
    case 'AWS::Lambda::LayerVersion':
    case 'AWS::Lambda::Url': {
      const x = arn('lambda', `${type === 'AWS::Lambda::LayerVersion' ? 'layer' : 'function'}:${name}:1`)
      return { ref: x, attributes: { Arn: x, FunctionArn: x, LayerVersionArn: x, FunctionUrl: `https://${suffix(name).toLowerCase()}.lambda-url.${r}.on.aws/` } }
    }
    case 'AWS::Lambda::EventSourceMapping':
      return { ref: suffix(name).toLowerCase(), attributes: { Id: suffix(name).toLowerCase(), EventSourceMappingArn: arn('lambda', `event-source-mapping:${suffix(name).toLowerCase()}`) } }
    case 'AWS::IAM::Role':
      return { ref: name, attributes: { Arn: `arn:${pt}:iam::${a}:role/${name}`, RoleId: `AROA${suffix(name)}` } }
    case 'AWS::IAM::ManagedPolicy': {
      const x = `arn:${pt}:iam::${a}:policy/${name}`
      return { ref: x, attributes: { PolicyArn: x, PolicyId: `ANPA${suffix(name)}` } }
    }
    case 'AWS::Logs::LogGroup':
      return { ref: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } }
    case 'AWS::SecretsManager::Secret': {
      const x = arn('secretsmanager', `secret:${name}-${suffix(name).slice(0, 6)}`)
      return { ref: x, attributes: { Id: x } }
    }
    case 'AWS::RDS::DBCluster': {
      const id = name.toLowerCase()
      return { ref: id, attributes: { DBClusterArn: arn('rds', `cluster:${id}`), 'Endpoint.Address': `${id}.cluster-${suffix(id).toLowerCase()}.${r}.rds.${u}`, 'Endpoint.Port': '5432', DBClusterResourceId: `cluster-${suffix(id)}` } }
    }
    case 'AWS::ApiGatewayV2::Api': {
      const id = suffix(name).slice(0, 10).toLowerCase()
      return { ref: id, attributes: { ApiId: id, ApiEndpoint: `https://${id}.execute-api.${r}.${u}` } }
    }
    case 'AWS::Events::Rule':
      return { ref: name, attributes: { Arn: arn('events', `rule/${name}`) } }
    case 'AWS::Scheduler::Schedule':
      return { ref: name, attributes: { Arn: arn('scheduler', `schedule/default/${name}`) } }
    case 'AWS::CloudWatch::Alarm':
      return { ref: name, attributes: { Arn: arn('cloudwatch', `alarm:${name}`) } }
    case 'AWS::SSM::Parameter':
      return { ref: name, attributes: { Type: 'String', Value: '' } }
    case 'AWS::KMS::Key': {
      const id = suffix(name).toLowerCase()
      return { ref: id, attributes: { Arn: arn('kms', `key/${id}`), KeyId: id } }
    }
    default: {
      // Some service's resource: its ARN in the usual shape, named after the type.
      const [, service = 'unknown', kind = 'resource'] = type.split('::')
      return { ref: name, attributes: { Arn: arn(service.toLowerCase(), `${kind.toLowerCase()}/${name}`) } }
    }
  }
}
