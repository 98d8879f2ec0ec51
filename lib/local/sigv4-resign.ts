/**
 * Signs a received SigV4 request again with other credentials, keeping its
 * date, scope, signed headers and payload hash: for an emulator that checks
 * signatures against the one key pair it knows (s3rver), behind a proxy
 * whose callers each sign with a key of their own. The canonical URI is the
 * path as received (S3's rule: no second encoding).
 */
import { createHash, createHmac } from 'node:crypto'

export interface Credentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
}

const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

function canonicalQuery(query: string): string {
  if (!query) return ''
  return query
    .split('&')
    .filter(Boolean)
    .map((p) => {
      const i = p.indexOf('=')
      const k = decodeURIComponent((i < 0 ? p : p.slice(0, i)).replace(/\+/g, '%20'))
      const v = i < 0 ? '' : decodeURIComponent(p.slice(i + 1).replace(/\+/g, '%20'))
      return [rfc3986(k), rfc3986(v)] as const
    })
    .filter(([k]) => k !== 'X-Amz-Signature')
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest()
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex')

/**
 * The `Authorization` header for the request signed with `credentials`, or
 * undefined when the request carries no SigV4 `Authorization` header (or no
 * `x-amz-date`) to re-sign.
 */
export function resignedAuthorization(
  req: { method: string; path: string; query: string; headers: Readonly<Record<string, string | string[] | undefined>>; body?: Uint8Array },
  credentials: Credentials,
): string | undefined {
  const header = (k: string) => {
    const v = req.headers[k]
    return Array.isArray(v) ? v.join(',') : v
  }
  const auth = header('authorization')
  const m = auth && /^AWS4-HMAC-SHA256\s+Credential=[^/]+\/([^,\s]+),\s*SignedHeaders=([^,\s]+)/.exec(auth)
  const amzDate = header('x-amz-date')
  if (!m || !amzDate) return undefined
  const scope = m[1]!
  const signed = m[2]!
  const canonicalHeaders = signed
    .split(';')
    .map((h) => `${h}:${(header(h) ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('')
  const payload = header('x-amz-content-sha256') ?? sha256(req.body ?? new Uint8Array())
  const canonical = [req.method.toUpperCase(), req.path, canonicalQuery(req.query), canonicalHeaders, signed, payload].join('\n')
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n')
  const [date, region, service] = scope.split('/') as [string, string, string]
  let key: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, date)
  key = hmac(key, region)
  key = hmac(key, service)
  key = hmac(key, 'aws4_request')
  const signature = createHmac('sha256', key).update(toSign).digest('hex')
  return `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signed}, Signature=${signature}`
}
