/**
 * The real-client scenarios (./scenarios) run by the rehearsal: the
 * rehearsal's target (./scenario-target.ts) given as the scenarios take it,
 * and their outcomes as the report lists them. A scenario skipped because a
 * part is not stood in passes and says why.
 */
import type { ScenarioOutcome as ReportedOutcome } from '../../core/rehearse/run-report'
import { usesDatabase } from './triggers'
import { runScenarios, type ScenarioOptions, type ScenarioTarget as ClientTarget } from './scenarios'
import type { ScenarioTarget } from './scenario-target'

/** The emulators' own key pair: the `floe … --stack` commands the scenarios run act as the deployment's administrator. */
const ADMIN = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

/** What the rehearsal does not stand in, read from what it started. */
export function unavailableParts(t: ScenarioTarget): NonNullable<ClientTarget['unavailable']> {
  const running = new Set(t.mappingsStarted.map((m) => m.function))
  const enrich = t.functions.find((f) => f.logicalId.startsWith('EnrichFunction'))
  const queueRuns = t.mappingsStarted.some((m) => /^arn:[^:]+:sqs:/.test(m.stream))
  const storeNeeded = t.functions.some(usesDatabase)
  return {
    ...(enrich && !running.has(enrich.logicalId) ? { enrich: 'enrich\'s mapping does not run (synthesized without ACCEPT_LIMITED_USE_LICENSE=yes)' } : {}),
    ...(storeNeeded && t.endpoints.dataApi === undefined ? { searchStore: 'no Data API stands in for the search store' } : {}),
    ...(!queueRuns ? { queue: 'no queue trigger runs' } : {}),
    ...(t.endpoints.cloudwatch === undefined ? { cloudwatch: 'no CloudWatch stands in' } : {}),
  }
}

/** The scenarios' own target of the rehearsal's. */
export function clientTarget(t: ScenarioTarget): ClientTarget {
  const { dataApi, cloudwatch, ...endpoints } = t.endpoints
  return {
    apiUrl: t.url,
    stackOutputs: t.outputs,
    clients: t.clients,
    endpoints: { ...endpoints, ...(dataApi ? { 'rds-data': dataApi } : {}), ...(cloudwatch ? { cloudwatch } : {}) },
    cliCredentials: ADMIN,
    unavailable: unavailableParts(t),
    functions: { all: t.functions, invocations: () => t.counts() },
  }
}

/** Runs every client scenario against the rehearsal; one reported outcome each. */
export async function clientScenarios(t: ScenarioTarget, opts: ScenarioOptions = {}): Promise<ReportedOutcome[]> {
  const outcomes = await runScenarios(clientTarget(t), { log: t.log, waitMs: t.waitMs, ...opts })
  return outcomes.map((o) => ({
    name: o.name,
    ok: o.ok,
    ms: o.ms,
    ...(o.skipped !== undefined ? { skipped: o.skipped } : {}),
    ...(!o.ok && o.detail !== undefined ? { problem: o.detail } : {}),
    ...(o.ok && o.detail !== undefined ? { detail: o.detail } : {}),
  }))
}
