/**
 * The deploy-time settings of the CDK app, in one place: read from the CDK
 * context (`npx cdk deploy --all -c stage=staging -c alarmEmail=ops@acme.com`,
 * or the `context` of `cdk.json`), validated together, each with its default.
 * The table in docs/deploying.md (Deploy settings) lists them. Pure: no CDK imports,
 * so the rules are tested without synthesizing.
 */
import { enrichmentFiles } from './enrichments'

/** CloudWatch Logs' retention periods, in days. */
export const RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const

export interface AlarmThresholds {
  /** Enrich's and the loaders' `IteratorAge` (Maximum over 5 minutes), in seconds. */
  readonly iteratorAgeSeconds: number
  /** A function's `Errors` in 5 minutes. */
  readonly functionErrors: number
  /** A function's `Throttles` in 5 minutes. */
  readonly functionThrottles: number
  /** Objects written to the stream triggers' on-failure destination in 5 minutes. */
  readonly failedBatches: number
  /** Enrich's bad rows as a percentage of its good events and bad rows together, over 5 minutes. */
  readonly badRowPercent: number
  /** The collector route's 5xx answers as a percentage of its requests, over 5 minutes. */
  readonly collector5xxPercent: number
  /** A table's read and write throttle events in 5 minutes. */
  readonly dynamoDbThrottles: number
  /** A stream's records rejected by write throttling (`WriteProvisionedThroughputExceeded`) in 5 minutes. */
  readonly streamWriteThrottles: number
}

export interface DeploySettings {
  /** Names the deployment: the stacks (other than `prod`: `FloeData-<stage>`), the alarms and the dashboard. */
  readonly stage: string
  /** Addresses subscribed (by e-mail) to the alarm topic. */
  readonly alarmEmails: readonly string[]
  /** Existing SNS topics the alarms are also sent to (a pager, a chat integration). */
  readonly alarmTopicArns: readonly string[]
  readonly thresholds: AlarmThresholds
  /** Retention of every function's log group. */
  readonly logRetentionDays: number
  /** Retention of the HTTP API's access log group. */
  readonly accessLogRetentionDays: number
  /** The HTTP API stage's steady rate, requests per second. */
  readonly throttleRateLimit: number
  /** The HTTP API stage's burst, requests. */
  readonly throttleBurstLimit: number
  /** Whether the search store (and what uses it) is deployed. */
  readonly searchStore: boolean
  /** A custom domain of the HTTP API and its ACM certificate, both or neither. */
  readonly domain?: { readonly name: string; readonly certificateArn: string }
  /** The directory of enrichment configuration files deployed to the assets bucket. */
  readonly enrichmentsDir?: string
  /** What answers trackers in front of the collector function (see `INGRESSES`). */
  readonly ingress: Ingress
  /** Capacity mode of every stream: provisioned shards (the declared counts) or on-demand. */
  readonly streamMode: StreamCapacityMode
  /** The enrich function and its stream trigger. */
  readonly enrich: EnrichSettings
}

/**
 * `apigateway`: the collector is the HTTP API's `$default` route (throttled by the stage, billed per request).
 * `function-url`: a Lambda function URL of the collector (no charge of its own; throttle with reserved concurrency).
 * `alb`: an Application Load Balancer with an HTTPS listener on the custom domain (billed per hour and per LCU).
 * The HTTP API keeps serving every other route in all three.
 */
export const INGRESSES = ['apigateway', 'alb', 'function-url'] as const
export type Ingress = (typeof INGRESSES)[number]
export const STREAM_MODES = ['provisioned', 'on-demand'] as const
export type StreamCapacityMode = (typeof STREAM_MODES)[number]

export interface EnrichSettings {
  readonly memoryMb: number
  /** Records per invocation; unset: `input.retrievalMode.maxRecords` of the enrich configuration. */
  readonly batchSize?: number
  readonly batchingWindowSeconds: number
  readonly parallelizationFactor: number
}

export const DEFAULT_STAGE = 'prod'

export const defaultThresholds: AlarmThresholds = {
  iteratorAgeSeconds: 300,
  functionErrors: 1,
  functionThrottles: 1,
  failedBatches: 1,
  badRowPercent: 5,
  collector5xxPercent: 1,
  dynamoDbThrottles: 1,
  streamWriteThrottles: 1,
}

interface NumberRule {
  readonly min: number
  readonly max: number
  readonly integer: boolean
}

/** Each context key, its default and its rule (what the table in docs/deploying.md says). */
export const settingKeys = {
  stage: { default: DEFAULT_STAGE, meaning: 'names the deployment' },
  alarmEmail: { default: undefined, meaning: 'e-mail addresses (comma-separated) subscribed to the alarm topic' },
  alarmTopicArn: { default: undefined, meaning: 'existing SNS topic ARNs (comma-separated) the alarms are also sent to' },
  alarmIteratorAgeSeconds: { default: defaultThresholds.iteratorAgeSeconds, rule: { min: 1, max: 7 * 86_400, integer: true } },
  alarmFunctionErrors: { default: defaultThresholds.functionErrors, rule: { min: 1, max: 1_000_000, integer: true } },
  alarmFunctionThrottles: { default: defaultThresholds.functionThrottles, rule: { min: 1, max: 1_000_000, integer: true } },
  alarmFailedBatches: { default: defaultThresholds.failedBatches, rule: { min: 1, max: 1_000_000, integer: true } },
  alarmBadRowPercent: { default: defaultThresholds.badRowPercent, rule: { min: 0.01, max: 100, integer: false } },
  alarmCollector5xxPercent: { default: defaultThresholds.collector5xxPercent, rule: { min: 0.01, max: 100, integer: false } },
  alarmDynamoDbThrottles: { default: defaultThresholds.dynamoDbThrottles, rule: { min: 1, max: 1_000_000, integer: true } },
  alarmStreamWriteThrottles: { default: defaultThresholds.streamWriteThrottles, rule: { min: 1, max: 1_000_000, integer: true } },
  logRetentionDays: { default: 30, retention: true },
  accessLogRetentionDays: { default: 'logRetentionDays', retention: true },
  throttleRateLimit: { default: 1000, rule: { min: 1, max: 1_000_000, integer: false } },
  throttleBurstLimit: { default: 2000, rule: { min: 1, max: 1_000_000, integer: true } },
  searchStore: { default: true, meaning: '`false` leaves the search store out' },
  domainName: { default: undefined, meaning: 'custom domain of the HTTP API' },
  certificateArn: { default: undefined, meaning: 'ACM certificate of domainName' },
  enrichmentsDir: { default: 'FLOE_ENRICHMENTS_DIR', meaning: 'enrichment configuration files deployed with the stack' },
  ingress: { default: 'apigateway', meaning: 'what answers trackers: apigateway, alb or function-url' },
  streamMode: { default: 'provisioned', meaning: 'stream capacity mode: provisioned or on-demand' },
  enrichMemoryMb: { default: 1024, rule: { min: 128, max: 10_240, integer: true } },
  enrichBatchSize: { default: 'input.retrievalMode.maxRecords', rule: { min: 1, max: 10_000, integer: true } },
  enrichBatchingWindowSeconds: { default: 1, rule: { min: 0, max: 300, integer: true } },
  enrichParallelizationFactor: { default: 1, rule: { min: 1, max: 10, integer: true } },
} as const

export type SettingKey = keyof typeof settingKeys

/** Context keys of the CDK itself (feature flags, lookups, bundling): never reported as unknown. */
const isCdkKey = (key: string) => key.startsWith('@') || key.includes(':') || key.startsWith('aws-cdk') || key.startsWith('cdk-')

export type SettingsResult =
  | { readonly ok: true; readonly settings: DeploySettings; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly errors: readonly string[] }

const EMAIL = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/
const ACM_ARN = /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/
const STAGE = /^[a-z][a-z0-9-]{0,19}$/

/**
 * Reads and checks every setting. `context` is the CDK context (values from
 * `-c` are strings, from `cdk.json` any JSON); `env` supplies the settings
 * that also come from the environment (`FLOE_ENRICHMENTS_DIR`). All problems
 * are reported together, each naming its key.
 */
export function readSettings(context: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv = process.env): SettingsResult {
  const errors: string[] = []
  const warnings: string[] = []
  const raw = (key: SettingKey): unknown => {
    const v = context[key]
    return v === null || (typeof v === 'string' && v.trim() === '') ? undefined : v
  }
  const problem = (key: SettingKey, what: string, got: unknown) => errors.push(`-c ${key}: ${what}, got ${JSON.stringify(got)}`)

  const str = (key: SettingKey): string | undefined => {
    const v = raw(key)
    if (v === undefined) return undefined
    if (typeof v !== 'string') {
      problem(key, 'must be a string', v)
      return undefined
    }
    return v.trim()
  }
  const list = (key: SettingKey, re: RegExp, what: string): string[] => {
    const v = raw(key)
    if (v === undefined) return []
    const items = typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]).map((s) => s.trim()) : undefined
    if (!items) {
      problem(key, `must be ${what} (comma-separated)`, v)
      return []
    }
    const bad = items.filter((s) => !re.test(s))
    if (bad.length > 0) errors.push(`-c ${key}: must be ${what} (comma-separated); not valid: ${bad.map((b) => JSON.stringify(b)).join(', ')}`)
    return [...new Set(items.filter((s) => re.test(s)))]
  }
  const num = (key: SettingKey, dflt: number, rule: NumberRule): number => {
    const v = raw(key)
    if (v === undefined) return dflt
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN
    const what = `must be ${rule.integer ? 'a whole number' : 'a number'} from ${rule.min} to ${rule.max}`
    if (!Number.isFinite(n) || n < rule.min || n > rule.max || (rule.integer && !Number.isInteger(n))) {
      problem(key, what, v)
      return dflt
    }
    return n
  }
  const retention = (key: SettingKey, dflt: number): number => {
    const v = raw(key)
    if (v === undefined) return dflt
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN
    if (!(RETENTION_DAYS as readonly number[]).includes(n)) {
      problem(key, `must be one of CloudWatch Logs' retention periods in days (${RETENTION_DAYS.join(', ')})`, v)
      return dflt
    }
    return n
  }
  const bool = (key: SettingKey, dflt: boolean): boolean => {
    const v = raw(key)
    if (v === undefined) return dflt
    if (v === true || v === 'true') return true
    if (v === false || v === 'false') return false
    problem(key, 'must be true or false', v)
    return dflt
  }

  const stage = str('stage') ?? DEFAULT_STAGE
  if (!STAGE.test(stage)) problem('stage', 'must be 1 to 20 lower-case letters, digits and hyphens, starting with a letter', context.stage)

  const rule = (key: SettingKey): NumberRule => (settingKeys[key] as { rule: NumberRule }).rule
  const thresholds: AlarmThresholds = {
    iteratorAgeSeconds: num('alarmIteratorAgeSeconds', defaultThresholds.iteratorAgeSeconds, rule('alarmIteratorAgeSeconds')),
    functionErrors: num('alarmFunctionErrors', defaultThresholds.functionErrors, rule('alarmFunctionErrors')),
    functionThrottles: num('alarmFunctionThrottles', defaultThresholds.functionThrottles, rule('alarmFunctionThrottles')),
    failedBatches: num('alarmFailedBatches', defaultThresholds.failedBatches, rule('alarmFailedBatches')),
    badRowPercent: num('alarmBadRowPercent', defaultThresholds.badRowPercent, rule('alarmBadRowPercent')),
    collector5xxPercent: num('alarmCollector5xxPercent', defaultThresholds.collector5xxPercent, rule('alarmCollector5xxPercent')),
    dynamoDbThrottles: num('alarmDynamoDbThrottles', defaultThresholds.dynamoDbThrottles, rule('alarmDynamoDbThrottles')),
    streamWriteThrottles: num('alarmStreamWriteThrottles', defaultThresholds.streamWriteThrottles, rule('alarmStreamWriteThrottles')),
  }
  const logRetentionDays = retention('logRetentionDays', settingKeys.logRetentionDays.default)
  const accessLogRetentionDays = retention('accessLogRetentionDays', logRetentionDays)
  const throttleRateLimit = num('throttleRateLimit', settingKeys.throttleRateLimit.default, rule('throttleRateLimit'))
  const throttleBurstLimit = num('throttleBurstLimit', settingKeys.throttleBurstLimit.default, rule('throttleBurstLimit'))

  const alarmEmails = list('alarmEmail', EMAIL, 'e-mail addresses')
  const alarmTopicArns = list('alarmTopicArn', SNS_TOPIC_ARN, 'SNS topic ARNs (arn:aws:sns:<region>:<account>:<name>)')
  if (alarmEmails.length === 0 && alarmTopicArns.length === 0 && errors.length === 0) {
    warnings.push('No alarm destination: the alarms go to the stack\'s SNS topic, which nobody is subscribed to (set -c alarmEmail=<address> or -c alarmTopicArn=<SNS topic ARN>)')
  }

  const searchStore = bool('searchStore', true)
  const domainName = str('domainName')?.toLowerCase()
  const certificateArn = str('certificateArn')
  let domain: DeploySettings['domain']
  if (domainName || certificateArn) {
    if (!domainName || !certificateArn) errors.push('A custom domain needs both -c domainName=<domain> and -c certificateArn=<ACM certificate ARN for it>')
    else {
      if (!DOMAIN.test(domainName)) problem('domainName', 'must be a domain name such as collector.acme.com', context.domainName)
      if (!ACM_ARN.test(certificateArn)) problem('certificateArn', 'must be an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)', context.certificateArn)
      domain = { name: domainName, certificateArn }
    }
  }
  const enrichmentsDir = str('enrichmentsDir') || enrichmentFiles.sourceDir(env)
  const oneOf = <T extends string>(key: SettingKey, allowed: readonly T[], dflt: T): T => {
    const v = str(key)
    if (v === undefined) return dflt
    if ((allowed as readonly string[]).includes(v)) return v as T
    problem(key, `must be one of ${allowed.join(', ')}`, context[key])
    return dflt
  }
  const ingress = oneOf('ingress', INGRESSES, 'apigateway')
  if (ingress === 'alb' && !domain && errors.length === 0) {
    errors.push('-c ingress=alb needs -c domainName=<domain> and -c certificateArn=<ACM certificate ARN>: the load balancer answers trackers over HTTPS on that domain')
  }
  const streamMode = oneOf('streamMode', STREAM_MODES, 'provisioned')
  const batchSizeSet = raw('enrichBatchSize') !== undefined
  const enrichBatchSize = num('enrichBatchSize', 0, rule('enrichBatchSize'))
  const enrich: EnrichSettings = {
    memoryMb: num('enrichMemoryMb', settingKeys.enrichMemoryMb.default, rule('enrichMemoryMb')),
    ...(batchSizeSet && enrichBatchSize > 0 ? { batchSize: enrichBatchSize } : {}),
    batchingWindowSeconds: num('enrichBatchingWindowSeconds', settingKeys.enrichBatchingWindowSeconds.default, rule('enrichBatchingWindowSeconds')),
    parallelizationFactor: num('enrichParallelizationFactor', settingKeys.enrichParallelizationFactor.default, rule('enrichParallelizationFactor')),
  }

  for (const key of Object.keys(context)) {
    if (key in settingKeys || isCdkKey(key)) continue
    const near = nearest(key, Object.keys(settingKeys))
    warnings.push(`Unknown deploy setting -c ${key}${near ? ` (did you mean ${near}?)` : ''}; it is ignored`)
  }
  if (errors.length > 0) return { ok: false, errors }
  return {
    ok: true,
    warnings,
    settings: { stage, alarmEmails, alarmTopicArns, thresholds, logRetentionDays, accessLogRetentionDays, throttleRateLimit, throttleBurstLimit, searchStore, domain, enrichmentsDir, ingress, streamMode, enrich },
  }
}

/** Like `readSettings`, but throws one error listing every problem. */
export function settingsOrThrow(context: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv = process.env): { settings: DeploySettings; warnings: readonly string[] } {
  const r = readSettings(context, env)
  if (!r.ok) throw new Error(`Invalid deploy settings:\n  ${r.errors.join('\n  ')}`)
  return r
}

/** The stack names of a stage: `FloeData`/`FloeApp` for `prod`, else `FloeData-<stage>`/`FloeApp-<stage>`. */
export function stackNames(stage: string): { data: string; app: string } {
  const suffix = stage === DEFAULT_STAGE ? '' : `-${stage}`
  return { data: `FloeData${suffix}`, app: `FloeApp${suffix}` }
}

/** The closest known key within two edits (case-insensitive), for "did you mean". */
function nearest(key: string, known: readonly string[]): string | undefined {
  let best: { k: string; d: number } | undefined
  for (const k of known) {
    const d = distance(key.toLowerCase(), k.toLowerCase())
    if (d <= 2 && (!best || d < best.d)) best = { k, d }
  }
  return best?.k
}

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]!
}
