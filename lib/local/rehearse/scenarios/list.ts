/** The scenarios that talk to the rehearsal, in the order they run. */
import { registryScenario, trackingDesignScenario } from './apis'
import { controlPlaneScenario, healthScenario, metricsScenario, recoveryScenario } from './control-plane'
import { microScenario } from './micro'
import { stackCliScenario } from './stack-cli'
import type { ScenarioContext } from './target'
import { trackersScenario } from './trackers'

export interface Scenario {
  readonly name: string
  /** Resolves with what was checked; throws ScenarioFailure (what failed) or ScenarioSkipped (why not run). */
  run(ctx: ScenarioContext): Promise<string>
}

export const apiScenarios: readonly Scenario[] = [
  { name: 'health', run: healthScenario },
  { name: 'control-plane', run: controlPlaneScenario },
  { name: 'trackers', run: trackersScenario },
  { name: 'micro', run: microScenario },
  { name: 'tracking-design', run: trackingDesignScenario },
  { name: 'registry', run: registryScenario },
  { name: 'recovery', run: recoveryScenario },
  { name: 'metrics', run: metricsScenario },
  { name: 'stack-cli', run: stackCliScenario },
]
