/** The control plane wired to the deployment: settings table, registry keys, assets bucket, search store. */
import { randomUUID } from 'node:crypto'
import { ConditionalCheckFailedException, DeleteItemCommand, GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import { hashCredentials, verifyCredentials } from '../core/auth/basic'
import { controlPlaneApi } from '../core/control-plane/api'
import { hashKey } from '../core/iglu/apikeys'
import { deleteIndex } from '../core/search/store'
import { LICENCE, LICENCE_ENV } from '../core/enrich/config'
import { LICENCE_SOURCE_ENV } from '../core/enrich/function-config'
import { FLOE_VERSION } from '../core/version'
import type { HttpHandler } from '../http/types'
import { enrichmentFiles } from '../infra/enrichments'
import { envVar } from '../infra/resources'
import { database } from './database'
import { licenceAccepted } from '../runtime/licence'
import { httpsControl } from '../runtime/https'
import { API_DOMAIN_ENV, awsDomainAnswer } from '../core/https/aws'
import { bumpGenerations, restartHere } from '../runtime/restarts'
import { bucketName, tableName } from '../runtime/resources'
import { clients, LOCAL_ENDPOINTS_ENV } from './clients'
import { DynamoCredentialStore } from './credentials-store'
import { enrichTriggerFromEnvironment, lambdaMappingControl, resumeEnrich } from './enrich-pause'
import { probeAsset, storedEnrichments } from './enrichments'
import { deleteExternalRegistry, listExternalRegistries, putExternalRegistry } from './external-registries'
import { recordedLicence, recordLicence } from './licence'
import { DynamoKeyStore, DynamoSchemaStore } from './registry-store'
import { trackingPlansFromEnvironment } from './tracking-plans-service'
import { deploymentResolver } from './resolver'

const TELEMETRY_KEY = { pk: { S: 'control-plane' }, sk: { S: 'telemetry' } }
/** Held while the enrichments are checked and changed, so that two changes never check against the same old set. */
const ENRICHMENTS_LOCK = { pk: { S: 'control-plane' }, sk: { S: 'lock#enrichments' } }
/** Longer than the function may run: a lock left by a function that died expires. */
const LOCK_MS = 60_000
/** How long one asset may take to answer the control plane's check. */
const ASSET_PROBE_TIMEOUT_MS = 5_000

/** Runs `change` holding a lock item of the settings table; undefined when another holder has it. */
async function exclusive<T>(ddb: DynamoDBClient, table: string, key: typeof ENRICHMENTS_LOCK, change: () => Promise<T>): Promise<T | undefined> {
  const owner = randomUUID()
  const now = Date.now()
  try {
    await ddb.send(new PutItemCommand({
      TableName: table,
      // lockedUntil in ms; expiresAt (the table's TTL, in seconds) lets DynamoDB remove a forgotten lock
      Item: { ...key, owner: { S: owner }, lockedUntil: { N: String(now + LOCK_MS) }, expiresAt: { N: String(Math.ceil((now + LOCK_MS) / 1000) + 3600) } },
      ConditionExpression: 'attribute_not_exists(pk) OR lockedUntil < :now',
      ExpressionAttributeValues: { ':now': { N: String(now) } },
    }))
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException || (err as Error).name === 'ConditionalCheckFailedException') return undefined
    throw err
  }
  try {
    return await change()
  } finally {
    await ddb.send(new DeleteItemCommand({ TableName: table, Key: key, ConditionExpression: '#o = :o', ExpressionAttributeNames: { '#o': 'owner' }, ExpressionAttributeValues: { ':o': { S: owner } } })).catch(() => undefined)
  }
}

/** Whether the functions run in this process (the local stack). */
const runsLocally = (env: NodeJS.ProcessEnv) => env[LOCAL_ENDPOINTS_ENV] !== undefined

export function controlPlaneFromEnvironment(env: NodeJS.ProcessEnv = process.env): HttpHandler {
  let handler: HttpHandler | undefined
  return (req) => {
    handler ??= build(env)
    return handler(req)
  }
}

function build(env: NodeJS.ProcessEnv): HttpHandler {
  const { ddb, s3 } = clients()
  const settings = tableName('settings')
  const credentials = new DynamoCredentialStore(ddb, settings)
  const hasSearchStore = env[envVar('database', 'search')] !== undefined
  // Enrich's mapping, which enrich disables on a set-up failure (none locally: there only the record is cleared).
  const enrichTrigger = enrichTriggerFromEnvironment(env)
  const mappings = enrichTrigger ? lambdaMappingControl() : undefined
  return controlPlaneApi({
    version: FLOE_VERSION,
    async restart(services) {
      const generations = await bumpGenerations(ddb, settings, services)
      // Locally every function runs here: the restart is done when this returns.
      if (runsLocally(env)) restartHere(services, generations)
      // After an enrichment change or a restart of enrich: a paused enrich tries its configuration again.
      if (services.includes('enrich')) await resumeEnrich({ ddb, table: settings, mappings, trigger: enrichTrigger })
    },
    resetSearchStore: hasSearchStore
      ? async () => {
          const db = await database('search')
          await deleteIndex(db, 'good')
          await deleteIndex(db, 'bad')
        }
      : undefined,
    async changeCredentials(currentPassword, username, password) {
      for (;;) {
        // The password is checked against the very version replaced: a change in between is checked again.
        const current = await credentials.get()
        if (!current || !(await verifyCredentials(current, current.username, currentPassword))) return false
        const next = await hashCredentials(username, password, current.version + 1, new Date())
        if (await credentials.replace(next, current.version)) return true
      }
    },
    async setSuperApiKey(key) {
      await new DynamoKeyStore(ddb, tableName('apiKeys'), settings).putSuperKeyHash(hashKey(key), { onlyIfAbsent: false })
    },
    listExternalRegistries: () => listExternalRegistries(ddb, settings),
    putExternalRegistry: (r) => putExternalRegistry(ddb, settings, r),
    deleteExternalRegistry: (name) => deleteExternalRegistry(ddb, settings, name),
    async probe(uri) {
      try {
        const res = await fetch(uri, { redirect: 'manual', signal: AbortSignal.timeout(5_000) })
        await res.body?.cancel()
        return undefined
      } catch (err) {
        const e = err as Error & { cause?: { code?: string; message?: string } }
        return e.cause?.code ?? e.cause?.message ?? e.message
      }
    },
    listEnrichments: () => storedEnrichments(s3, bucketName(enrichmentFiles.bucket), enrichmentFiles.prefix),
    async putEnrichment(file, text) {
      await s3.send(new PutObjectCommand({ Bucket: bucketName(enrichmentFiles.bucket), Key: `${enrichmentFiles.prefix}${file}`, Body: text, ContentType: 'application/json' }))
    },
    async deleteEnrichment(file) {
      await s3.send(new DeleteObjectCommand({ Bucket: bucketName(enrichmentFiles.bucket), Key: `${enrichmentFiles.prefix}${file}` }))
    },
    enrichmentResolver: () => deploymentResolver(env, ddb),
    probeAsset: (location) => probeAsset(location, { s3, timeoutMs: ASSET_PROBE_TIMEOUT_MS }),
    exclusive: (change) => exclusive(ddb, settings, ENRICHMENTS_LOCK, change),
    async telemetryDisabled() {
      const res = await ddb.send(new GetItemCommand({ TableName: settings, Key: TELEMETRY_KEY, ConsistentRead: true }))
      return res.Item?.disable?.BOOL === true
    },
    async setTelemetryDisabled(disable) {
      await ddb.send(new PutItemCommand({ TableName: settings, Item: { ...TELEMETRY_KEY, disable: { BOOL: disable }, updatedAt: { S: new Date().toISOString() } } }))
    },
    async submitDomain(domain) {
      // Locally the stack obtains a certificate and serves HTTPS itself.
      const local = runsLocally(env) ? httpsControl() : undefined
      if (local) return local.submit(domain)
      if (runsLocally(env)) return { status: 409, message: `This stack does not serve HTTPS (it was started without it). Nothing was changed.` }
      return { status: 200, message: awsDomainAnswer(domain, env[API_DOMAIN_ENV]) }
    },
    async domainState() {
      const local = runsLocally(env) ? httpsControl() : undefined
      if (local) return local.state()
      const current = env[API_DOMAIN_ENV] || undefined
      return { deployment: 'aws', domain: current, configuredAtDeployTime: true }
    },
    now: () => new Date(),
    trackingPlans: trackingPlansFromEnvironment(env, clients),
    async licence() {
      const source = env[LICENCE_SOURCE_ENV]
      if (source === 'environment') return { accepted: true, by: source, variable: LICENCE_ENV, licence: LICENCE }
      if (source === 'configuration') return { accepted: true, by: source, licence: LICENCE }
      const r = await recordedLicence(ddb, settings)
      return r ? { accepted: true, by: r.by, at: r.at, licence: LICENCE } : { accepted: false, licence: LICENCE }
    },
    listSchemas: () => new DynamoSchemaStore(ddb, tableName('schemas')).listAll(),
    async acceptLicence(by, at) {
      await recordLicence(ddb, settings, { by, at: at.toISOString() })
      // Locally the stack starts enrich's trigger now; on AWS the trigger was deployed disabled.
      if (runsLocally(env)) {
        await licenceAccepted()
        return 'enrich starts processing the waiting records'
      }
      if (env[LICENCE_SOURCE_ENV] === 'environment') return `enrich already runs (the licence was accepted through the environment variable ${LICENCE_ENV})`
      if (env[LICENCE_SOURCE_ENV] === 'configuration') return 'enrich already runs (the licence was accepted in its configuration, license.accept)'
      return 'recorded; deploy again with ACCEPT_LIMITED_USE_LICENSE=yes (npx cdk deploy) to enable enrich\'s trigger'
    },
  })
}
