/**
 * Which IAM actions on which resources an AWS API request needs, read from
 * the HTTP request as the SDK sends it (SigV4 credential scope, target
 * header, path, query and body). AWS authorizes some operations as more
 * than one check (a batch writes each table it names, a Data API statement
 * also reads its secret); each check is answered here. An operation this
 * module does not know is `unclassified`: its caller must refuse it rather
 * than let it through unchecked.
 */
import { classifyCloudWatch, CLOUDWATCH_OPERATIONS } from './requests/cloudwatch'
import { classifyDynamoDb, DYNAMODB_OPERATIONS } from './requests/dynamodb'
import { classifyKinesis, KINESIS_OPERATIONS } from './requests/kinesis'
import { classifyLambda, LAMBDA_OPERATIONS } from './requests/lambda'
import { classifyRdsData, RDS_DATA_OPERATIONS } from './requests/rds-data'
import { classifyS3, S3_OPERATIONS } from './requests/s3'
import { classifySqs, SQS_OPERATIONS } from './requests/sqs'
import type { AwsHttpRequest, CheckContext, Classification, ClassifyEnv, ServiceRequest } from './requests/common'

export type { AwsHttpRequest, Check, CheckContext, Classification, ClassifyEnv, ServiceRequest } from './requests/common'

/** What the signature says about the caller and the request: SigV4 `Authorization` header, or a presigned URL's query. */
export interface SignatureScope {
  readonly accessKeyId: string
  readonly region: string
  readonly service: string
  readonly sessionToken?: string
}

/** The SigV4 credential scope of a request, or undefined when it is not signed with SigV4. */
export function signatureScope(headers: AwsHttpRequest['headers'], query: string): SignatureScope | undefined {
  const auth = headers['authorization']
  let credential: string | undefined
  let token = headers['x-amz-security-token']
  if (auth) {
    credential = /^AWS4-HMAC-SHA256\s+Credential=([^,\s]+)/.exec(auth)?.[1]
  } else {
    const q = new URLSearchParams(query)
    if (q.get('X-Amz-Algorithm') === 'AWS4-HMAC-SHA256') credential = q.get('X-Amz-Credential') ?? undefined
    token ??= q.get('X-Amz-Security-Token') ?? undefined
  }
  const parts = credential?.split('/')
  if (!parts || parts.length !== 5 || parts[4] !== 'aws4_request' || !parts[0]) return undefined
  return { accessKeyId: parts[0], region: parts[2]!, service: parts[3]!, ...(token ? { sessionToken: token } : {}) }
}

/** The ARN partition of a region. */
export function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn'
  if (region.startsWith('us-gov-')) return 'aws-us-gov'
  if (region.startsWith('us-iso-')) return 'aws-iso'
  if (region.startsWith('us-isob-')) return 'aws-iso-b'
  return 'aws'
}

/** The signing names of the services this module classifies. */
const SERVICES: Readonly<Record<string, (r: ServiceRequest) => Classification>> = {
  dynamodb: classifyDynamoDb,
  kinesis: classifyKinesis,
  s3: classifyS3,
  sqs: classifySqs,
  'rds-data': classifyRdsData,
  monitoring: classifyCloudWatch,
  lambda: classifyLambda,
}

/** The API operations (as the SDK names its commands, without `Command`) classified for each service, by signing name. */
export const CLASSIFIED_OPERATIONS: Readonly<Record<string, readonly string[]>> = {
  dynamodb: DYNAMODB_OPERATIONS,
  kinesis: KINESIS_OPERATIONS,
  s3: S3_OPERATIONS,
  sqs: SQS_OPERATIONS,
  'rds-data': RDS_DATA_OPERATIONS,
  monitoring: CLOUDWATCH_OPERATIONS,
  lambda: LAMBDA_OPERATIONS,
}

/**
 * Whether `classify` needs the request's body. S3 reads it only for a
 * multi-object delete, so object uploads can stream through unread.
 */
export function needsBody(service: string, method: string, query: string): boolean {
  if (service !== 's3') return true
  return method.toUpperCase() === 'POST' && new URLSearchParams(query).has('delete')
}

/** The checks AWS makes for `request`, signed for `scope`. */
export function classify(request: AwsHttpRequest, scope: Pick<SignatureScope, 'region' | 'service'>, env: ClassifyEnv): Classification {
  const service = scope.service
  const fn = SERVICES[service]
  if (!fn) return { kind: 'unclassified', service, reason: `requests to the ${service} service are not classified` }
  const region = scope.region || env.region || 'us-east-1'
  const context: CheckContext = { 'aws:SecureTransport': request.secure, 'aws:RequestedRegion': region }
  try {
    return fn({ request, region, account: env.account, partition: partitionOf(region), context, env })
  } catch (e) {
    return { kind: 'unclassified', service, reason: `malformed request: ${(e as Error).message}` }
  }
}

