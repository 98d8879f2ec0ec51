/**
 * The answers AWS gives a request it refuses, per protocol, so that the SDK
 * raises the error it raises against AWS: JSON services (DynamoDB, Kinesis)
 * a `400` with `__type` `…#AccessDeniedException`; the JSON services that
 * keep their query-protocol codes (SQS, CloudWatch) also the
 * `x-amzn-query-error` header with the old code and its `403`; REST-JSON
 * services (RDS Data API, Lambda) a `403` with `x-amzn-errortype`; S3 a
 * `403` XML `<Error>` document (no body for a `HEAD`).
 */
import { randomUUID } from 'node:crypto'

export interface ErrorAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export type Refusal = 'access-denied' | 'unknown-key' | 'unsigned'

/** The JSON protocol version of each JSON service (its content type). */
const JSON_SERVICES: Readonly<Record<string, string>> = { dynamodb: '1.0', kinesis: '1.1', sqs: '1.0', monitoring: '1.0' }
/** JSON services whose SDK reads the query protocol's code from `x-amzn-query-error`. */
const QUERY_COMPATIBLE = new Set(['sqs', 'monitoring'])

/** [JSON error type, query-protocol code, REST status, S3 code] of each refusal. */
const CODES: Readonly<Record<Refusal, { json: string; query: string; rest: number; s3: string }>> = {
  'access-denied': { json: 'AccessDeniedException', query: 'AccessDenied', rest: 403, s3: 'AccessDenied' },
  'unknown-key': { json: 'UnrecognizedClientException', query: 'InvalidClientTokenId', rest: 403, s3: 'InvalidAccessKeyId' },
  unsigned: { json: 'MissingAuthenticationTokenException', query: 'MissingAuthenticationToken', rest: 403, s3: 'AccessDenied' },
}

const xmlEscape = (s: string) => s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)

/** The answer to a refused request to `service` (its SigV4 signing name). */
export function refusal(service: string, method: string, kind: Refusal, message: string): ErrorAnswer {
  const codes = CODES[kind]
  const requestId = randomUUID()
  if (service === 's3') {
    const body = method.toUpperCase() === 'HEAD' ? '' : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${codes.s3}</Code><Message>${xmlEscape(message)}</Message><RequestId>${requestId}</RequestId><HostId>${requestId}</HostId></Error>`
    return { status: 403, headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId }, body }
  }
  const version = JSON_SERVICES[service]
  if (version) {
    const queryCompatible = QUERY_COMPATIBLE.has(service)
    const headers: Record<string, string> = { 'content-type': `application/x-amz-json-${version}`, 'x-amzn-requestid': requestId }
    if (queryCompatible) headers['x-amzn-query-error'] = `${codes.query};Sender`
    const body = JSON.stringify({ __type: `com.amazon.coral.service#${codes.json}`, message })
    return { status: queryCompatible ? 403 : 400, headers, body }
  }
  return { status: codes.rest, headers: { 'content-type': 'application/json', 'x-amzn-errortype': codes.json, 'x-amzn-requestid': requestId }, body: JSON.stringify({ message }) }
}

/** IAM's message for a denied call, as AWS words it for an assumed role. */
export function deniedMessage(principal: string, action: string, resource: string, explicit: boolean): string {
  const why = explicit ? 'with an explicit deny in an identity-based policy' : `because no identity-based policy allows the ${action} action`
  return `User: ${principal} is not authorized to perform: ${action} on resource: ${resource} ${why}`
}
