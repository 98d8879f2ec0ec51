/**
 * Lambda (REST-JSON): `POST /2015-03-31/functions/{name}/invocations` is
 * `lambda:InvokeFunction` on the function (name, partial or full ARN, with
 * the `Qualifier` as the ARN's version or alias); `GET …/functions/{name}`
 * and `…/configuration` read it. Event source mappings: listing takes no
 * resource (`lambda:FunctionArn` in the context when filtered by function);
 * reading or updating one is checked on
 * `arn:…:lambda:R:A:event-source-mapping:UUID`, with the function it
 * invokes as `lambda:FunctionArn` (from the environment's mappings).
 */
import { check, classified, jsonBody, str, unclassified, type CheckContext, type Classification, type ServiceRequest } from './common'

const SERVICE = 'lambda'

/** The operations classified here. */
export const LAMBDA_OPERATIONS: readonly string[] = ['Invoke', 'GetFunction', 'GetFunctionConfiguration', 'ListEventSourceMappings', 'GetEventSourceMapping', 'UpdateEventSourceMapping', 'DeleteEventSourceMapping']

/** A function's ARN from the name, partial ARN (`A:function:N`) or ARN an API call accepts. */
export function functionArn(r: ServiceRequest, name: string, qualifier?: string): string {
  let arn: string
  if (name.startsWith('arn:')) arn = name
  else if (/^\d{12}:function:/.test(name)) arn = `arn:${r.partition}:lambda:${r.region}:${name}`
  else arn = `arn:${r.partition}:lambda:${r.region}:${r.account}:function:${name}`
  // A qualifier in the query is added unless the name already carries one (`…:function:N:Q`).
  return qualifier && arn.split(':').length === 7 ? `${arn}:${qualifier}` : arn
}

function eventSourceMappings(r: ServiceRequest, verb: string, uuid: string | undefined): Classification {
  const q = new URLSearchParams(r.request.query)
  if (!uuid) {
    const fn = q.get('FunctionName')
    const extra: CheckContext = fn ? { 'lambda:FunctionArn': functionArn(r, fn) } : {}
    if (verb === 'GET') return classified(SERVICE, 'ListEventSourceMappings', [check(r, 'lambda:ListEventSourceMappings', '*', extra)])
    return unclassified(SERVICE, `${verb} event-source-mappings is not classified`)
  }
  const arn = `arn:${r.partition}:lambda:${r.region}:${r.account}:event-source-mapping:${uuid}`
  const operation = ({ GET: 'GetEventSourceMapping', PUT: 'UpdateEventSourceMapping', DELETE: 'DeleteEventSourceMapping' } as Record<string, string>)[verb]
  if (!operation) return unclassified(SERVICE, `${verb} event-source-mappings/{UUID} is not classified`)
  // The function the mapping invokes (or, for an update that moves it, the one it will invoke).
  const named = verb === 'PUT' ? str(jsonBody(r)['FunctionName']) : undefined
  const fn = named ? functionArn(r, named) : r.env.eventSourceMappingFunction?.(uuid)
  return classified(SERVICE, operation, [check(r, `lambda:${operation}`, arn, fn ? { 'lambda:FunctionArn': fn } : {})])
}

export function classifyLambda(r: ServiceRequest): Classification {
  const { method, path, query } = r.request
  const esm = /^\/2015-03-31\/event-source-mappings\/?([^/]*)$/.exec(path)
  if (esm) return eventSourceMappings(r, method.toUpperCase(), esm[1] ? decodeURIComponent(esm[1]) : undefined)
  const m = /^\/2015-03-31\/functions\/([^/]+)(\/invocations|\/configuration)?\/?$/.exec(path)
  if (!m) return unclassified(SERVICE, `${method} ${path} is not a classified Lambda operation`)
  const name = decodeURIComponent(m[1]!)
  const arn = functionArn(r, name, new URLSearchParams(query).get('Qualifier') ?? undefined)
  const verb = method.toUpperCase()
  if (m[2] === '/invocations' && verb === 'POST') return classified(SERVICE, 'Invoke', [check(r, 'lambda:InvokeFunction', arn)])
  if (m[2] === '/configuration' && verb === 'GET') return classified(SERVICE, 'GetFunctionConfiguration', [check(r, 'lambda:GetFunctionConfiguration', arn)])
  if (!m[2] && verb === 'GET') return classified(SERVICE, 'GetFunction', [check(r, 'lambda:GetFunction', arn)])
  return unclassified(SERVICE, `${method} ${path} is not a classified Lambda operation`)
}
