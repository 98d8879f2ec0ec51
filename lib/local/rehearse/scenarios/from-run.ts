/**
 * The scenarios' target of a running assembly (runAssembly's result): its
 * HTTP API, its stacks' outputs resolved with that API's URL, and what is
 * not stood in, read from what the run started and skipped.
 */
import { stackOutputs } from '../../../core/rehearse/outputs'
import type { ResolverOptions } from '../../../core/rehearse/resolve'
import type { AssemblyStack } from '../../../core/rehearse/template'
import type { RunningAssembly } from '../run'
import type { ScenarioTarget } from './target'

export interface TargetOfRun {
  readonly run: RunningAssembly
  /** The stacks the run was started with (names as deployed). */
  readonly stacks: readonly AssemblyStack[]
  readonly resolver?: ResolverOptions
  readonly clients: ScenarioTarget['clients']
  /** The endpoints the functions were given (by the SDK's service identifier). */
  readonly endpoints: Readonly<Record<string, string>>
  readonly cliCredentials?: ScenarioTarget['cliCredentials']
}

/** What the run lacks, with why, from its endpoints, its search store stand-in and its mappings. */
export function unavailableOf(run: Pick<RunningAssembly, 'mappings' | 'functions' | 'searchStore'>, endpoints: Readonly<Record<string, string>>): NonNullable<ScenarioTarget['unavailable']> {
  const skipped = run.mappings?.skipped ?? []
  const enrich = run.functions.find((f) => f.logicalId.startsWith('EnrichFunction'))
  const enrichOff = enrich !== undefined && (run.mappings === undefined || skipped.some((m) => m.function === enrich.logicalId && m.reason === 'disabled in the template'))
  // a queue trigger started is one whose source is a queue's ARN
  const queueOff = !(run.mappings?.started ?? []).some((m) => /^arn:[^:]+:sqs:/.test(m.stream))
  return {
    ...(enrichOff ? { enrich: run.mappings === undefined ? 'the event source mappings are not run' : 'enrich\'s mapping is disabled in the template (synthesized without ACCEPT_LIMITED_USE_LICENSE=yes)' } : {}),
    ...(endpoints['rds-data'] === undefined && run.searchStore === undefined ? { searchStore: 'no Data API stands in for the search store' } : {}),
    ...(queueOff ? { queue: 'no queue trigger runs (no SQS endpoint, or its function is skipped)' } : {}),
    ...(endpoints.cloudwatch === undefined && endpoints.monitoring === undefined ? { cloudwatch: 'no CloudWatch endpoint' } : {}),
  }
}

export function targetOfRun(o: TargetOfRun): { target: ScenarioTarget; problems: ReturnType<typeof stackOutputs>['problems'] } {
  const outputs = stackOutputs(o.stacks, { apiUrl: o.run.url, ...(o.resolver ? { resolver: o.resolver } : {}) })
  return {
    target: {
      apiUrl: o.run.url,
      stackOutputs: outputs.outputs,
      clients: o.clients,
      endpoints: o.endpoints,
      ...(o.cliCredentials ? { cliCredentials: o.cliCredentials } : {}),
      unavailable: unavailableOf(o.run, o.endpoints),
      functions: { all: o.run.functions, invocations: () => o.run.report() },
    },
    problems: outputs.problems,
  }
}
