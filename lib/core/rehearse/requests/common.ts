/** Types and helpers shared by the request classifier's service modules. */

/** An IAM condition context: key → value(s), as policies' `Condition` blocks read them. */
export type CheckContext = Readonly<Record<string, string | number | boolean | readonly string[]>>

/** One authorization AWS makes for a request. */
export interface Check {
  /** `service:Action`, e.g. `dynamodb:PutItem`. */
  readonly action: string
  /** The resource ARN, or `*` for actions that take no resource. */
  readonly resource: string
  readonly context: CheckContext
}

export type Classification =
  | { readonly kind: 'classified'; readonly service: string; readonly operation: string; readonly checks: readonly Check[] }
  | { readonly kind: 'unclassified'; readonly service: string; readonly operation?: string; readonly reason: string }

/** An HTTP request to an AWS endpoint, as received. */
export interface AwsHttpRequest {
  readonly method: string
  /** The `Host` header (with its port, if any). */
  readonly host: string
  /** The path as sent (percent-encoded), without the query. */
  readonly path: string
  /** The raw query string, without `?`. */
  readonly query: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The body's bytes (empty when the classification does not need it: see `needsBody`). */
  readonly body: Uint8Array
  /** Whether the request arrived over TLS (`aws:SecureTransport`). */
  readonly secure: boolean
}

export interface ClassifyEnv {
  /** The account the resources belong to (the caller's own account). */
  readonly account: string
  /** The region when the request's signature names none. */
  readonly region?: string
  /** The stream a Kinesis or DynamoDB Streams shard iterator was issued for (iterators are opaque). */
  readonly iteratorStream?: (iterator: string) => string | undefined
  /** The function ARN an event source mapping (by UUID) invokes: AWS's `lambda:FunctionArn` for a request naming only the mapping. */
  readonly eventSourceMappingFunction?: (uuid: string) => string | undefined
  /** A table's partition key attribute (from its key schema), for `dynamodb:LeadingKeys`. */
  readonly partitionKeyOf?: (tableArn: string) => string | undefined
}

/** What every service module is given. */
export interface ServiceRequest {
  readonly request: AwsHttpRequest
  readonly region: string
  readonly account: string
  readonly partition: string
  /** Global condition keys of this request. */
  readonly context: CheckContext
  readonly env: ClassifyEnv
}

/** A check with the request's global context and any service keys. */
export function check(r: ServiceRequest, action: string, resource: string, extra: CheckContext = {}): Check {
  return { action, resource, context: { ...r.context, ...extra } }
}

export function classified(service: string, operation: string, checks: readonly Check[]): Classification {
  return { kind: 'classified', service, operation, checks }
}

export function unclassified(service: string, reason: string, operation?: string): Classification {
  return { kind: 'unclassified', service, reason, ...(operation ? { operation } : {}) }
}

/** The JSON body as an object (an empty body is `{}`); throws on anything else. */
export function jsonBody(r: ServiceRequest): Record<string, unknown> {
  const text = new TextDecoder().decode(r.request.body)
  if (text.trim() === '') return {}
  const v: unknown = JSON.parse(text)
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('the body is not a JSON object')
  return v as Record<string, unknown>
}

/** The form-encoded body of a query-protocol request. */
export function formBody(r: ServiceRequest): URLSearchParams {
  return new URLSearchParams(new TextDecoder().decode(r.request.body))
}

/** `Service_20120810.Operation` → `Operation`, with its prefix. */
export function target(r: ServiceRequest): { prefix: string; operation: string } | undefined {
  const t = r.request.headers['x-amz-target']
  if (!t) return undefined
  const dot = t.lastIndexOf('.')
  return dot < 0 ? undefined : { prefix: t.slice(0, dot), operation: t.slice(dot + 1) }
}

export function isFormEncoded(r: ServiceRequest): boolean {
  return (r.request.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)
