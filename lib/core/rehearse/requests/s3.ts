/**
 * S3's REST API, path-style (`/bucket/key`) and virtual-hosted
 * (`bucket.s3.R.amazonaws.com/key`, or `bucket.localhost`). Object
 * operations are checked on `arn:…:s3:::bucket/key`, bucket operations on
 * `arn:…:s3:::bucket`. S3 authorizes operations under action names of its
 * own: a `HEAD` of an object is `s3:GetObject`, listing a bucket is
 * `s3:ListBucket`, each part of a multipart upload is `s3:PutObject`, and a
 * multi-object delete is one `s3:DeleteObject` per key.
 */
import { check, classified, str, unclassified, type Check, type CheckContext, type Classification, type ServiceRequest } from './common'

const SERVICE = 's3'

/** Query parameters that are not sub-resources (they do not change the operation). */
const PLAIN_PARAMS = new Set([
  'x-id', 'list-type', 'prefix', 'delimiter', 'max-keys', 'continuation-token', 'start-after', 'fetch-owner', 'encoding-type',
  'marker', 'key-marker', 'upload-id-marker', 'version-id-marker', 'max-uploads', 'max-parts', 'part-number-marker',
  'response-content-type', 'response-content-language', 'response-expires', 'response-cache-control',
  'response-content-disposition', 'response-content-encoding', 'partNumber',
])

/** The operations classified here (bucket configuration reads and writes aside). */
export const S3_OPERATIONS: readonly string[] = [
  'GetObject', 'HeadObject', 'PutObject', 'CopyObject', 'DeleteObject', 'DeleteObjects', 'ListObjects', 'ListObjectsV2', 'ListBuckets',
  'HeadBucket', 'CreateBucket', 'DeleteBucket', 'CreateMultipartUpload', 'UploadPart', 'UploadPartCopy', 'CompleteMultipartUpload',
  'AbortMultipartUpload', 'ListParts', 'ListMultipartUploads', 'ListObjectVersions', 'GetBucketLocation', 'RestoreObject',
  'GetObjectTagging', 'PutObjectTagging', 'DeleteObjectTagging', 'GetObjectAcl', 'PutObjectAcl',
]

/** The bucket and key of a request; the key is undefined for a bucket operation (and both for the service root). */
export function bucketAndKey(host: string, path: string): { bucket?: string; key?: string } {
  const hostname = host.replace(/:\d+$/, '').toLowerCase()
  const virtual = /^(.+?)\.s3(?:[.-][a-z0-9-]+)*\.amazonaws\.com(?:\.cn)?$/.exec(hostname)?.[1] ?? /^(.+)\.localhost$/.exec(hostname)?.[1]
  const rest = path.startsWith('/') ? path.slice(1) : path
  if (virtual) return rest === '' ? { bucket: virtual } : { bucket: virtual, key: decodeKey(rest) }
  if (rest === '') return {}
  const slash = rest.indexOf('/')
  if (slash < 0) return { bucket: decodeURIComponent(rest) }
  const key = rest.slice(slash + 1)
  return key === '' ? { bucket: decodeURIComponent(rest.slice(0, slash)) } : { bucket: decodeURIComponent(rest.slice(0, slash)), key: decodeKey(key) }
}

const decodeKey = (k: string) => k.split('/').map(decodeURIComponent).join('/')

const XML_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
function xmlText(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (all, e: string) =>
    e.startsWith('#x') ? String.fromCodePoint(parseInt(e.slice(2), 16)) : e.startsWith('#') ? String.fromCodePoint(parseInt(e.slice(1), 10)) : XML_ENTITIES[e] ?? all,
  )
}

/** The keys (and version ids) of a `DeleteObjects` body. */
export function deleteObjectsKeys(xml: string): { key: string; versionId?: string }[] {
  const out: { key: string; versionId?: string }[] = []
  for (const m of xml.matchAll(/<Object>([\s\S]*?)<\/Object>/g)) {
    const key = /<Key>([\s\S]*?)<\/Key>/.exec(m[1]!)?.[1]
    const version = /<VersionId>([\s\S]*?)<\/VersionId>/.exec(m[1]!)?.[1]
    if (key !== undefined) out.push({ key: xmlText(key), ...(version ? { versionId: xmlText(version) } : {}) })
  }
  return out
}

/** The sub-resource of a request (the first query parameter that names one), if any. */
function subresource(q: URLSearchParams): string | undefined {
  for (const k of q.keys()) if (!PLAIN_PARAMS.has(k) && !k.startsWith('X-Amz-') && k !== 'versionId' && k !== 'uploadId') return k
  return undefined
}

const BUCKET_SUBRESOURCE_ACTIONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  GET: {
    location: 'GetBucketLocation', versions: 'ListBucketVersions', uploads: 'ListBucketMultipartUploads', policy: 'GetBucketPolicy',
    tagging: 'GetBucketTagging', cors: 'GetBucketCORS', lifecycle: 'GetLifecycleConfiguration', notification: 'GetBucketNotification',
    versioning: 'GetBucketVersioning', acl: 'GetBucketAcl', encryption: 'GetEncryptionConfiguration', publicAccessBlock: 'GetBucketPublicAccessBlock',
  },
  PUT: {
    policy: 'PutBucketPolicy', tagging: 'PutBucketTagging', cors: 'PutBucketCORS', lifecycle: 'PutLifecycleConfiguration',
    notification: 'PutBucketNotification', versioning: 'PutBucketVersioning', acl: 'PutBucketAcl', encryption: 'PutEncryptionConfiguration',
    publicAccessBlock: 'PutBucketPublicAccessBlock',
  },
  DELETE: { policy: 'DeleteBucketPolicy', tagging: 'PutBucketTagging', cors: 'PutBucketCORS', lifecycle: 'PutLifecycleConfiguration' },
}

function bucketOperation(r: ServiceRequest, verb: string, bucket: string, q: URLSearchParams): Classification {
  const arn = `arn:${r.partition}:s3:::${bucket}`
  const sub = subresource(q)
  const one = (operation: string, action: string, extra: CheckContext = {}) => classified(SERVICE, operation, [check(r, `s3:${action}`, arn, extra)])
  if (sub) {
    if (verb === 'POST' && sub === 'delete') return unclassified(SERVICE, 'DeleteObjects is classified from its body', 'DeleteObjects')
    const action = BUCKET_SUBRESOURCE_ACTIONS[verb]?.[sub]
    return action ? one(`${verb} ?${sub}`, action) : unclassified(SERVICE, `${verb} on bucket sub-resource ?${sub} is not classified`)
  }
  if (verb === 'GET') {
    const list: Record<string, string | number> = {}
    for (const [param, key] of [['prefix', 's3:prefix'], ['delimiter', 's3:delimiter']] as const) {
      const v = q.get(param)
      if (v !== null) list[key] = v
    }
    const max = q.get('max-keys')
    if (max !== null && /^\d+$/.test(max)) list['s3:max-keys'] = Number(max)
    return one(q.get('list-type') === '2' ? 'ListObjectsV2' : 'ListObjects', 'ListBucket', list)
  }
  if (verb === 'HEAD') return one('HeadBucket', 'ListBucket')
  if (verb === 'PUT') return one('CreateBucket', 'CreateBucket')
  if (verb === 'DELETE') return one('DeleteBucket', 'DeleteBucket')
  return unclassified(SERVICE, `${verb} on a bucket is not classified`)
}

function objectOperation(r: ServiceRequest, verb: string, bucket: string, key: string, q: URLSearchParams): Classification {
  const arn = `arn:${r.partition}:s3:::${bucket}/${key}`
  const h = r.request.headers
  const sub = subresource(q)
  const versioned = q.has('versionId')
  const upload = q.has('uploadId')
  const one = (operation: string, action: string, extra: CheckContext = {}) => classified(SERVICE, operation, [check(r, `s3:${action}`, arn, extra)])
  if (sub === 'tagging') {
    const action = ({ GET: 'GetObjectTagging', PUT: 'PutObjectTagging', DELETE: 'DeleteObjectTagging' } as Record<string, string>)[verb]
    return action ? one(`${verb} ?tagging`, versioned ? action.replace('Object', 'ObjectVersion') : action) : unclassified(SERVICE, `${verb} ?tagging`)
  }
  if (sub === 'acl') {
    const action = ({ GET: 'GetObjectAcl', PUT: 'PutObjectAcl' } as Record<string, string>)[verb]
    return action ? one(`${verb} ?acl`, action) : unclassified(SERVICE, `${verb} ?acl`)
  }
  if (sub === 'uploads' && verb === 'POST') return putObject(r, 'CreateMultipartUpload', arn)
  if (sub === 'restore' && verb === 'POST') return one('RestoreObject', 'RestoreObject')
  if (sub) return unclassified(SERVICE, `${verb} on object sub-resource ?${sub} is not classified`)
  switch (verb) {
    case 'GET':
      return upload ? one('ListParts', 'ListMultipartUploadParts') : one('GetObject', versioned ? 'GetObjectVersion' : 'GetObject')
    case 'HEAD':
      return one('HeadObject', versioned ? 'GetObjectVersion' : 'GetObject')
    case 'PUT': {
      const operation = upload ? (h['x-amz-copy-source'] ? 'UploadPartCopy' : 'UploadPart') : h['x-amz-copy-source'] ? 'CopyObject' : 'PutObject'
      return putObject(r, operation, arn)
    }
    case 'POST':
      return upload ? one('CompleteMultipartUpload', 'PutObject') : unclassified(SERVICE, 'POST on an object is not classified')
    case 'DELETE':
      return upload ? one('AbortMultipartUpload', 'AbortMultipartUpload') : one('DeleteObject', versioned ? 'DeleteObjectVersion' : 'DeleteObject')
    default:
      return unclassified(SERVICE, `${verb} on an object is not classified`)
  }
}

/** A write of an object: `s3:PutObject`, plus reading the copy source, and the ACL and tagging it sets. */
function putObject(r: ServiceRequest, operation: string, arn: string): Classification {
  const h = r.request.headers
  const extra: Record<string, string> = {}
  for (const k of ['x-amz-acl', 'x-amz-server-side-encryption', 'x-amz-storage-class']) if (h[k]) extra[`s3:${k}`] = h[k]!
  const checks: Check[] = [check(r, 's3:PutObject', arn, extra)]
  const source = str(h['x-amz-copy-source'])
  if (source) {
    const [path, query] = source.split('?') as [string, string | undefined]
    const decoded = decodeURIComponent(path.replace(/^\//, ''))
    const versioned = new URLSearchParams(query ?? '').has('versionId')
    checks.push(check(r, versioned ? 's3:GetObjectVersion' : 's3:GetObject', `arn:${r.partition}:s3:::${decoded}`))
  }
  if (h['x-amz-acl'] || Object.keys(h).some((k) => k.startsWith('x-amz-grant-'))) checks.push(check(r, 's3:PutObjectAcl', arn))
  if (h['x-amz-tagging'] && !source) checks.push(check(r, 's3:PutObjectTagging', arn))
  return classified(SERVICE, operation, checks)
}

export function classifyS3(r: ServiceRequest): Classification {
  const verb = r.request.method.toUpperCase()
  const q = new URLSearchParams(r.request.query)
  const { bucket, key } = bucketAndKey(r.request.host, r.request.path)
  if (!bucket) {
    return verb === 'GET' ? classified(SERVICE, 'ListBuckets', [check(r, 's3:ListAllMyBuckets', '*')]) : unclassified(SERVICE, `${verb} / is not classified`)
  }
  if (key === undefined && verb === 'POST' && q.has('delete')) {
    const keys = deleteObjectsKeys(new TextDecoder().decode(r.request.body))
    if (keys.length === 0) return unclassified(SERVICE, 'DeleteObjects without keys', 'DeleteObjects')
    return classified(SERVICE, 'DeleteObjects', keys.map((k) => check(r, k.versionId ? 's3:DeleteObjectVersion' : 's3:DeleteObject', `arn:${r.partition}:s3:::${bucket}/${k.key}`)))
  }
  return key === undefined ? bucketOperation(r, verb, bucket, q) : objectOperation(r, verb, bucket, key, q)
}
