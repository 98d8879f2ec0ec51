/**
 * Real clients through a rehearsed deployment: each scenario runs what a
 * user's client does against the running cloud assembly and reads back where
 * the data landed. Scenarios are independent: a failure is recorded (with
 * what failed) and the next one still runs; one that needs a part that is not
 * stood in is recorded as skipped, with the reason. The last outcome,
 * `functions`, names the functions of the assembly no scenario invoked.
 */
import { usesDatabase } from '../triggers'
import { apiScenarios } from './list'
import { ScenarioContext, ScenarioFailure, ScenarioSkipped, type ScenarioOptions, type ScenarioOutcome, type ScenarioTarget } from './target'

export { ScenarioContext, type ScenarioOptions, type ScenarioOutcome, type ScenarioTarget } from './target'
export { browserTrackerBody } from './trackers'
export { targetOfRun, unavailableOf, type TargetOfRun } from './from-run'

/** The scenarios' names, in the order they run. */
export const SCENARIOS = [...apiScenarios.map((s) => s.name), 'functions'] as const

async function timed(name: string, run: () => Promise<string>): Promise<ScenarioOutcome> {
  const start = performance.now()
  const ms = () => Math.round(performance.now() - start)
  try {
    const detail = await run()
    return { name, ok: true, detail, ms: ms() }
  } catch (err) {
    if (err instanceof ScenarioSkipped) return { name, ok: true, skipped: err.message, ms: ms() }
    const detail = err instanceof ScenarioFailure ? err.message : `${(err as Error)?.name ?? 'Error'}: ${(err as Error)?.message ?? String(err)}`
    return { name, ok: false, detail, ms: ms() }
  }
}

/**
 * The functions never invoked: ok when none, or when each is explained by a
 * part that is not stood in (a function that reaches the search store while
 * none is; one with only a queue trigger while no queue is; enrich while its
 * mapping does not run).
 */
function coverage(target: ScenarioTarget): string {
  const fns = target.functions
  if (!fns) throw new ScenarioSkipped('the target gives no function counts')
  const counts = new Map(fns.invocations().map((c) => [c.logicalId, c.invocations]))
  const idle = fns.all.filter((f) => (counts.get(f.logicalId) ?? 0) === 0)
  const u = target.unavailable ?? {}
  const why = (f: (typeof idle)[number]): string | undefined => {
    if (u.searchStore && usesDatabase(f)) return u.searchStore
    if (u.queue && f.triggers.length > 0 && f.triggers.every((t) => t.kind === 'sqs') && f.routes.length === 0) return u.queue
    if (u.enrich && f.triggers.some((t) => t.kind === 'kinesis' && !t.enabled) && f.routes.length === 0) return u.enrich
    // /micro/validate runs enrich in the request: it answers 503 while enrich may not run
    if (u.enrich && f.logicalId.startsWith('MicroValidateFunction')) return u.enrich
    return undefined
  }
  const unexplained = idle.filter((f) => why(f) === undefined)
  if (unexplained.length > 0) throw new ScenarioFailure(`never invoked: ${unexplained.map((f) => f.logicalId).join(', ')}`)
  const invoked = fns.all.length - idle.length
  const explained = idle.map((f) => `${f.logicalId} (${why(f)})`)
  return `${invoked} of ${fns.all.length} functions invoked${explained.length ? `; not invoked: ${explained.join(', ')}` : ''}`
}

/** Runs the scenarios (all, or `opts.only`) one after another; one outcome each. */
export async function runScenarios(target: ScenarioTarget, opts: ScenarioOptions = {}): Promise<ScenarioOutcome[]> {
  const wanted = (name: string) => opts.only === undefined || opts.only.includes(name)
  let ctx: ScenarioContext
  try {
    ctx = new ScenarioContext(target, opts)
  } catch (err) {
    return [{ name: 'target', ok: false, detail: (err as Error).message, ms: 0 }]
  }
  const outcomes: ScenarioOutcome[] = []
  for (const s of apiScenarios) {
    if (!wanted(s.name)) continue
    ctx.log(`scenario ${s.name}…`)
    const o = await timed(s.name, () => s.run(ctx))
    ctx.log(`scenario ${s.name}: ${o.skipped ? `skipped (${o.skipped})` : o.ok ? 'ok' : `FAILED: ${o.detail}`}`)
    outcomes.push(o)
  }
  if (wanted('functions')) outcomes.push(await timed('functions', async () => coverage(target)))
  return outcomes
}
