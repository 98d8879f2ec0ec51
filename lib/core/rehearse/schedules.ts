/**
 * The schedules of a cloud assembly that invoke its functions: each
 * `AWS::Events::Rule` with a `ScheduleExpression` (its targets that are
 * functions of the assembly) and each `AWS::Scheduler::Schedule` whose target
 * is one, with the event each delivers (EventBridge's "Scheduled Event", or
 * the schedule's `Input`). The rehearsal invokes each once; no time passes.
 */
import type { FunctionInventory } from './inventory'
import type { AssemblyResolver } from './resolve'
import type { AssemblyStack } from './template'

export interface Schedule {
  readonly stack: string
  readonly logicalId: string
  readonly expression: string
  readonly enabled: boolean
  /** The function's logical ID. */
  readonly function: string
  readonly event: unknown
}

function json(text: unknown): unknown {
  if (typeof text !== 'string') return undefined
  try { return JSON.parse(text) } catch { return text }
}

export function schedules(stacks: readonly AssemblyStack[], resolver: AssemblyResolver, functions: readonly FunctionInventory[], now: Date): Schedule[] {
  const byArn = new Map(functions.flatMap((f) => [[f.arn, f.logicalId], [f.name, f.logicalId]] as const))
  const out: Schedule[] = []
  for (const s of stacks) {
    const place = resolver.place(s.name)
    for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      const p = r.Properties ?? {}
      const str = (v: unknown) => { const x = resolver.resolve(s.name, v); return x.ok && typeof x.value === 'string' ? x.value : undefined }
      if (r.Type === 'AWS::Events::Rule' && p.ScheduleExpression !== undefined) {
        const expression = str(p.ScheduleExpression) ?? String(p.ScheduleExpression)
        const ruleArn = resolver.physical(s.name, id)?.attributes.Arn ?? id
        for (const t of (Array.isArray(p.Targets) ? p.Targets : []) as { Arn?: unknown; Input?: unknown }[]) {
          const fn = byArn.get(str(t.Arn) ?? '')
          if (!fn) continue
          const event = t.Input !== undefined ? json(str(t.Input)) : {
            version: '0', id: `rehearsal-${id}`, 'detail-type': 'Scheduled Event', source: 'aws.events',
            account: place.account, time: now.toISOString().replace(/\.\d{3}Z$/, 'Z'), region: place.region, resources: [ruleArn], detail: {},
          }
          out.push({ stack: s.name, logicalId: id, expression, enabled: p.State === undefined || p.State === 'ENABLED', function: fn, event })
        }
      }
      if (r.Type === 'AWS::Scheduler::Schedule') {
        const target = (p.Target ?? {}) as { Arn?: unknown; Input?: unknown }
        const fn = byArn.get(str(target.Arn) ?? '')
        if (!fn) continue
        out.push({ stack: s.name, logicalId: id, expression: str(p.ScheduleExpression) ?? '', enabled: p.State === undefined || p.State === 'ENABLED', function: fn, event: json(str(target.Input)) ?? {} })
      }
    }
  }
  return out
}
