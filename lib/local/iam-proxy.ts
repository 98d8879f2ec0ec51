/**
 * An HTTP proxy in front of an emulator (DynamoDB Local, kinesalite, s3rver,
 * an SQS or Data API server) that authorizes every AWS API call as IAM
 * would before the emulator sees it. The caller is the access key of the
 * request's SigV4 signature, mapped to an identity (a function and its
 * role's policies); the request is classified into the IAM checks AWS makes
 * for it; each check is put to the `authorize` port. Only when every check
 * is allowed is the request forwarded, unchanged (its body streamed when
 * the classification does not read it); otherwise the caller gets the
 * answer AWS gives (`AccessDeniedException`, or S3's `AccessDenied`), and
 * an unknown key is refused as AWS refuses one. A request that cannot be
 * classified is refused too. Every check is recorded as a call. It speaks
 * HTTP/1.1 and cleartext HTTP/2 (what the Kinesis client uses by default) on
 * one port, and HTTP/1.1 to the emulator.
 *
 * A function reaches it as it would reach AWS: its role's key pair in
 * `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`) and
 * the service's proxy in `AWS_ENDPOINT_URL_<SERVICE>` (an address, not a
 * name, keeps S3 path-style); SQS clients follow the queue URL, so queue
 * URLs must name the SQS proxy. One proxy per emulator; the service is read
 * from each request's signature.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createH2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2'
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net'
import { classify, needsBody, signatureScope, type AwsHttpRequest, type CheckContext } from '../core/rehearse/requests'
import { deniedMessage, refusal, type ErrorAnswer } from './iam-proxy-errors'
import { resignedAuthorization, type Credentials } from './sigv4-resign'
import { listenLocal } from './listen'

/** Who signs with an access key: a function (by its logical ID) with its role's policies. */
export interface ProxyIdentity<P = unknown> {
  readonly name: string
  readonly policies: P
  /** The role's name, for the principal ARN in messages and condition keys (the function's name when omitted). */
  readonly roleName?: string
  /** When set, the request must carry this `X-Amz-Security-Token` (temporary credentials, as a function's role gives). */
  readonly sessionToken?: string
}

export interface AuthorizeRequest {
  readonly action: string
  readonly resource: string
  readonly context: CheckContext
}

export interface Decision {
  readonly decision: 'allowed' | 'explicit-deny' | 'implicit-deny'
  /** Which statement decided, as the evaluator names it (kept in the call log). */
  readonly statement?: unknown
}

/** The evaluator: IAM's decision for one check of an identity. */
export type Authorize<P = unknown> = (identity: ProxyIdentity<P>, request: AuthorizeRequest) => Decision | Promise<Decision>

/** One authorization made, as the rehearsal reports it. */
export interface ProxyCall {
  readonly function: string
  readonly action: string
  readonly resource: string
  readonly allowed: boolean
  readonly service: string
  readonly operation?: string
  readonly decision: Decision['decision'] | 'unclassified'
  /** Why a request could not be classified. */
  readonly reason?: string
  /** The evaluator's statement that allowed or denied it. */
  readonly statement?: unknown
}

export interface IamProxyOptions<P = unknown> {
  /** The emulator's base URL, e.g. `http://127.0.0.1:8000`. */
  readonly target: string
  readonly identities: ReadonlyMap<string, ProxyIdentity<P>>
  readonly authorize: Authorize<P>
  /** The account of the principals and of resources named without one. */
  readonly account: string
  /** The region when a signature names none. */
  readonly region?: string
  readonly host?: string
  readonly port?: number
  /** `aws:SecureTransport`: true by default, as SDK calls reach AWS over TLS. */
  readonly secureTransport?: boolean
  /** Sign forwarded requests again with this key pair, for an emulator that checks signatures (s3rver). */
  readonly upstreamCredentials?: Credentials
  /** The function each event source mapping invokes (`lambda:FunctionArn` of a call naming only the mapping), for a proxy in front of a Lambda endpoint. */
  readonly eventSourceMappingFunction?: (uuid: string) => string | undefined
  /** Each table's partition key attribute, for `dynamodb:LeadingKeys`. */
  readonly partitionKeyOf?: (tableArn: string) => string | undefined
  /** Called for every check, as it is decided. */
  readonly onCall?: (call: ProxyCall) => void
  /** The largest body read for classification (default 32 MiB); larger ones are refused with 413. */
  readonly maxBody?: number
}

export interface IamProxy {
  readonly url: string
  /** Every check made, in order. */
  readonly calls: readonly ProxyCall[]
  close(): Promise<void>
}

/** How many shard iterators are remembered (each poll issues a new one; AWS expires them after five minutes). */
const ITERATORS_KEPT = 10_000

type Req = IncomingMessage | Http2ServerRequest
type Res = ServerResponse | Http2ServerResponse

class TooLarge extends Error {}

/** The body, up to `max` bytes; past that it is refused (`TooLarge`) and the rest drained unread, so the caller still reads the answer. */
function readBody(req: Req, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = []
    let size = 0
    const declared = Number(req.headers['content-length'])
    if (Number.isFinite(declared) && declared > max) {
      reject(new TooLarge())
      return
    }
    const onData = (c: Buffer) => {
      size += c.length
      if (size > max) {
        req.off('data', onData)
        parts.length = 0
        reject(new TooLarge())
        return
      }
      parts.push(c)
    }
    req.on('data', onData)
    req.on('end', () => resolve(Buffer.concat(parts)))
    req.on('error', reject)
  })
}

function answer(res: Res, a: ErrorAnswer): void {
  res.writeHead(a.status, { ...a.headers, 'content-length': Buffer.byteLength(a.body) })
  res.end(a.body)
}

function flatHeaders(h: IncomingHttpHeaders): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(h)) out[k] = Array.isArray(v) ? v.join(',') : v
  return out
}

/** Headers HTTP/2 forbids (connection-specific): dropped from an emulator's HTTP/1.1 answer relayed over HTTP/2. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'])

function relayHeaders(h: IncomingHttpHeaders, http2: boolean): IncomingHttpHeaders {
  if (!http2) return h
  return Object.fromEntries(Object.entries(h).filter(([k]) => !HOP_BY_HOP.has(k)))
}

/** Starts the proxy; resolves once it listens. */
export async function startIamProxy<P>(o: IamProxyOptions<P>): Promise<IamProxy> {
  const target = new URL(o.target)
  const agent = new Agent({ keepAlive: true })
  const calls: ProxyCall[] = []
  const iterators = new Map<string, string>()
  const maxBody = o.maxBody ?? 32 * 1024 * 1024
  const secure = o.secureTransport ?? true

  const record = (call: ProxyCall) => {
    calls.push(call)
    o.onCall?.(call)
  }

  const remember = (iterator: unknown, stream: string) => {
    if (typeof iterator !== 'string') return
    iterators.set(iterator, stream)
    if (iterators.size > ITERATORS_KEPT) iterators.delete(iterators.keys().next().value!)
  }

  /** Forwards the request (after every check allowed it) and relays the answer. */
  const forward = (req: Req, res: Res, parsed: AwsHttpRequest, body: Buffer | undefined, watch?: (json: Record<string, unknown>) => void) => {
    const http2 = req.httpVersionMajor === 2
    const headers: Record<string, string | string[] | undefined> = {}
    for (const [k, v] of Object.entries(req.headers)) if (!k.startsWith(':')) headers[k] = v
    headers['host'] = parsed.host
    if (o.upstreamCredentials) {
      const auth = resignedAuthorization({ ...parsed, headers, ...(body ? { body } : {}) }, o.upstreamCredentials)
      if (auth) headers['authorization'] = auth
    }
    const up = httpRequest({ protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (upRes) => {
      if (!watch || upRes.statusCode !== 200) {
        res.writeHead(upRes.statusCode ?? 502, relayHeaders(upRes.headers, http2))
        upRes.pipe(res as NodeJS.WritableStream)
        return
      }
      // A shard iterator's answer: read it to learn which stream each new iterator belongs to.
      const parts: Buffer[] = []
      upRes.on('data', (c: Buffer) => parts.push(c))
      upRes.on('end', () => {
        const text = Buffer.concat(parts)
        try {
          watch(JSON.parse(text.toString('utf8')) as Record<string, unknown>)
        } catch {
          // Not JSON (compressed, or an emulator's own answer): the iterators stay unknown and a later GetRecords is refused as unclassified.
        }
        res.writeHead(upRes.statusCode ?? 502, relayHeaders(upRes.headers, http2))
        res.end(text)
      })
      upRes.on('error', () => res.destroy())
    })
    up.on('error', (e) => {
      if (res.headersSent) res.destroy()
      else {
        res.writeHead(502, { 'content-type': 'text/plain' })
        res.end(`upstream ${o.target}: ${e.message}`)
      }
    })
    if (body) up.end(body)
    else req.pipe(up)
  }

  /** Requests that asked to be told before they send their body (`Expect: 100-continue`) and were not told yet. */
  const waiting = new WeakSet<Req>()
  /** Lets a waiting request send its body: only once it is to be read or forwarded. */
  const proceed = (req: Req, res: Res) => {
    if (waiting.delete(req)) res.writeContinue()
  }
  /** Answers a refused request; one whose body was never asked for does not send it (and its HTTP/1.1 connection closes). */
  const refuse = (req: Req, res: Res, a: ErrorAnswer) => {
    const unsent = waiting.delete(req) && req.httpVersionMajor < 2
    req.resume()
    answer(res, unsent ? { ...a, headers: { ...a.headers, connection: 'close' } } : a)
  }

  const handle = async (req: Req, res: Res) => {
    const url = req.url ?? '/'
    const q = url.indexOf('?')
    const path = q < 0 ? url : url.slice(0, q)
    const query = q < 0 ? '' : url.slice(q + 1)
    const headers = flatHeaders(req.headers)
    const method = req.method ?? 'GET'
    const scope = signatureScope(headers, query)
    if (!scope) {
      // Which service an unsigned request meant is unknown: S3 is the one that takes unsigned requests.
      const service = headers['x-amz-target'] ? (headers['x-amz-target'].startsWith('Kinesis') ? 'kinesis' : 'dynamodb') : 's3'
      refuse(req, res, refusal(service, method, 'unsigned', 'Request is missing Authentication Token'))
      return
    }
    const known = o.identities.get(scope.accessKeyId)
    const identity = known && (known.sessionToken === undefined || known.sessionToken === scope.sessionToken) ? known : undefined
    if (!identity) {
      const message = scope.service === 's3' ? 'The AWS Access Key Id you provided does not exist in our records.' : 'The security token included in the request is invalid.'
      refuse(req, res, refusal(scope.service, method, 'unknown-key', message))
      return
    }
    let body: Buffer | undefined
    if (needsBody(scope.service, method, query)) {
      proceed(req, res)
      try {
        body = await readBody(req, maxBody)
      } catch (e) {
        if (e instanceof TooLarge) {
          // The rest of the body is drained (up to a bound) so the caller reads this answer; then the connection closes.
          let drained = 0
          req.on('data', (c: Buffer) => {
            drained += c.length
            if (drained > 4 * maxBody) (req as { destroy(): void }).destroy()
          })
          req.resume()
          const close: Record<string, string> = req.httpVersionMajor < 2 ? { connection: 'close' } : {}
          answer(res, { status: 413, headers: { 'content-type': 'text/plain', ...close }, body: 'request body too large to authorize' })
        } else (res as { destroy(): void }).destroy()
        return
      }
    }
    const parsed: AwsHttpRequest = { method, host: headers['host'] ?? headers[':authority'] ?? '', path, query, headers, body: body ?? new Uint8Array(), secure }
    const region = scope.region || o.region || 'us-east-1'
    const role = identity.roleName ?? identity.name
    const principal = `arn:aws:sts::${o.account}:assumed-role/${role}/${identity.name}`
    const principalContext: CheckContext = {
      'aws:PrincipalArn': `arn:aws:iam::${o.account}:role/${role}`,
      'aws:PrincipalAccount': o.account,
      'aws:PrincipalType': 'AssumedRole',
      'aws:userid': `${role}:${identity.name}`,
    }
    const c = classify(parsed, { region, service: scope.service }, {
      account: o.account,
      region,
      iteratorStream: (it) => iterators.get(it),
      ...(o.eventSourceMappingFunction ? { eventSourceMappingFunction: o.eventSourceMappingFunction } : {}),
      ...(o.partitionKeyOf ? { partitionKeyOf: o.partitionKeyOf } : {}),
    })
    if (c.kind === 'unclassified') {
      const action = `${scope.service}:${c.operation ?? '?'}`
      record({ function: identity.name, action, resource: '?', allowed: false, service: c.service, ...(c.operation ? { operation: c.operation } : {}), decision: 'unclassified', reason: c.reason })
      refuse(req, res, refusal(scope.service, method, 'access-denied', `User: ${principal} is not authorized to perform: ${action}: the request could not be classified (${c.reason})`))
      return
    }
    for (const check of c.checks) {
      let d: Decision
      try {
        d = await o.authorize(identity, { action: check.action, resource: check.resource, context: { ...principalContext, ...check.context } })
      } catch (e) {
        // No decision is a denial: nothing is forwarded unauthorized.
        record({ function: identity.name, action: check.action, resource: check.resource, allowed: false, service: c.service, operation: c.operation, decision: 'implicit-deny', reason: `the evaluator failed: ${(e as Error).message}` })
        refuse(req, res, refusal(scope.service, method, 'access-denied', deniedMessage(principal, check.action, check.resource, false)))
        return
      }
      const allowed = d.decision === 'allowed'
      record({ function: identity.name, action: check.action, resource: check.resource, allowed, service: c.service, operation: c.operation, decision: d.decision, ...(d.statement !== undefined ? { statement: d.statement } : {}) })
      if (!allowed) {
        refuse(req, res, refusal(scope.service, method, 'access-denied', deniedMessage(principal, check.action, check.resource, d.decision === 'explicit-deny')))
        return
      }
    }
    const stream = c.checks[0]?.resource
    const watch =
      stream && (c.operation === 'GetShardIterator' || c.operation === 'GetRecords') && (scope.service === 'kinesis' || scope.service === 'dynamodb')
        ? (json: Record<string, unknown>) => remember(json['ShardIterator'] ?? json['NextShardIterator'], stream)
        : undefined
    proceed(req, res)
    forward(req, res, parsed, body, watch)
  }

  const listener = (req: Req, res: Res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) answer(res, { status: 500, headers: { 'content-type': 'text/plain' }, body: 'authorizing proxy failed' })
      else (res as { destroy(): void }).destroy()
    })
  }
  const h1 = createServer(listener)
  const h2 = createH2Server(listener)
  // S3 uploads ask before sending their body, as AWS refuses an unauthorized one before it is sent.
  const expecting = (req: Req, res: Res) => {
    waiting.add(req)
    listener(req, res)
  }
  h1.on('checkContinue', expecting)
  h2.on('checkContinue', expecting)
  const sessions = new Set<ServerHttp2Session>()
  h2.on('session', (s) => {
    sessions.add(s)
    s.on('close', () => sessions.delete(s))
  })
  const sockets = new Set<Socket>()
  // One port for both: a connection that opens with HTTP/2's preface ("PRI * HTTP/2.0") is HTTP/2.
  const server = createNetServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.once('data', (first: Buffer) => {
      socket.pause()
      if (first.subarray(0, 3).toString('latin1') !== 'PRI') {
        socket.unshift(first)
        h1.emit('connection', socket)
        socket.resume()
        return
      }
      // HTTP/2 reads the socket's handle natively, past anything given back to the stream: its connections go through a loopback hop.
      const inner = connect((h2.address() as AddressInfo).port, '127.0.0.1', () => {
        inner.write(first)
        socket.pipe(inner).pipe(socket)
        socket.resume()
      })
      sockets.add(inner)
      inner.on('close', () => (sockets.delete(inner), socket.destroy()))
      inner.on('error', () => socket.destroy())
      socket.on('close', () => inner.destroy())
      socket.on('error', () => inner.destroy())
    })
  })
  await new Promise<void>((resolve, reject) => {
    h2.once('error', reject)
    h2.listen(0, '127.0.0.1', () => resolve())
  })
  const url = await listenLocal(server, o)
  return {
    url,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy()
        for (const s of sessions) s.destroy()
        for (const s of sockets) s.destroy()
        h1.closeAllConnections()
        h2.close()
        server.close(() => resolve())
      }),
  }
}
