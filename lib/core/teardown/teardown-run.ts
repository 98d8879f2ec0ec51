/**
 * Carries out a teardown's steps (`./teardown-plan.ts`) through a port, then
 * reads back that every stack and resource is gone. A failed step stops the
 * run (later steps depend on it: a stack whose cluster is still there cannot
 * delete its VPC); what was done stays done, and running the command again
 * takes up what is left.
 */
import { describeStep, handled, type PlannedResource, type ResourceFacts, type StackDescription, type Step } from './teardown-plan'

export interface TeardownPort {
  /** A stack's status and resources with their deletion policies; undefined when there is no such stack (or it is deleted). */
  describeStack(name: string): Promise<StackDescription | undefined>
  /** What a resource holds now (`exists: false` when its service answers not found). */
  facts(r: PlannedResource): Promise<ResourceFacts>
  unprotect(r: PlannedResource): Promise<void>
  /** Deletes every object and object version; resolves to how many it deleted. */
  empty(r: PlannedResource): Promise<number>
  /** Deletes the resource and resolves when its service no longer has it. */
  delete(r: PlannedResource): Promise<void>
  /** Deletes the stack and resolves when CloudFormation reports it deleted; rejects on a failed deletion, with the reasons. */
  deleteStack(name: string): Promise<void>
}

export interface StepOutcome {
  readonly step: string
  readonly ok: boolean
  readonly detail?: string
}

export interface ReadBack {
  readonly what: string
  readonly gone: boolean
}

export interface TeardownOutcome {
  readonly steps: readonly StepOutcome[]
  /** Each stack and handled resource, looked up again after the steps. */
  readonly readBack: readonly ReadBack[]
  /** Every step succeeded and everything read back as gone. */
  readonly ok: boolean
}

export async function runTeardown(port: TeardownPort, stacks: readonly StackDescription[], resources: readonly PlannedResource[], steps: readonly Step[], progress: (line: string) => void = () => {}): Promise<TeardownOutcome> {
  const done: StepOutcome[] = []
  for (const s of steps) {
    const label = describeStep(s)
    progress(`${label}…`)
    try {
      let detail: string | undefined
      if (s.action === 'deleteStack') await port.deleteStack(s.stack)
      else if (s.action === 'unprotect') await port.unprotect(s.resource)
      else if (s.action === 'empty') detail = `${await port.empty(s.resource)} objects and versions deleted`
      else await port.delete(s.resource)
      done.push({ step: label, ok: true, ...(detail ? { detail } : {}) })
      progress(`  done${detail ? `: ${detail}` : ''}`)
    } catch (err) {
      const message = (err as Error).message ?? String(err)
      done.push({ step: label, ok: false, detail: message })
      progress(`  FAILED: ${message}`)
      break
    }
  }
  const readBack: ReadBack[] = []
  for (const s of stacks) {
    const now = await port.describeStack(s.name)
    readBack.push({ what: `stack ${s.name}`, gone: now === undefined || now.status === 'DELETE_COMPLETE' })
  }
  for (const r of resources.filter(handled)) {
    const f = await port.facts(r)
    readBack.push({ what: `${r.type} ${r.physicalId}`, gone: !f.exists })
  }
  return { steps: done, readBack, ok: done.every((d) => d.ok) && readBack.every((r) => r.gone) }
}
