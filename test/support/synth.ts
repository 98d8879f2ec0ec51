import { App, Validations, type Environment, type Stack } from 'aws-cdk-lib'
import { AwsSolutionsChecks } from 'cdk-nag'
import { Template } from 'aws-cdk-lib/assertions'
import { projectRoot } from '../../lib/local/handlers'
import { FloeAppStack, FloeDataStack } from '../../lib/infra/stacks'

const cached = new Map<string, { data: Template; app: Template }>()

/** Synthesizes both stacks once per test file and context, without bundling the functions. */
export function synthTemplates(context: Record<string, unknown> = {}): { data: Template; app: Template } {
  const key = JSON.stringify(context)
  let t = cached.get(key)
  if (!t) {
    // The stacks as the context alone makes them: not with enrichment files some environment of the run names
    // (the unit files share their process, so a file before this one may have set it).
    const enrichmentsDir = process.env.FLOE_ENRICHMENTS_DIR
    delete process.env.FLOE_ENRICHMENTS_DIR
    try {
      const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } })
      const data = new FloeDataStack(app, 'FloeData')
      const appStack = new FloeAppStack(app, 'FloeApp', { data: data.data, projectRoot })
      t = { data: Template.fromStack(data), app: Template.fromStack(appStack) }
    } finally {
      if (enrichmentsDir !== undefined) process.env.FLOE_ENRICHMENTS_DIR = enrichmentsDir
    }
    cached.set(key, t)
  }
  return t
}

/** The resources of a type whose logical id starts with `prefix` followed by CDK's hash. */
export function resourcesNamed(t: Template, type: string, prefix: string): Record<string, any> {
  const all = t.findResources(type)
  return Object.fromEntries(Object.entries(all).filter(([id]) => new RegExp(`^${prefix}[0-9A-F]{8}$`).test(id)))
}

/**
 * Both stacks checked with cdk-nag's AwsSolutions pack: the violations it
 * reports ('' when synthesis succeeds). `extra` may add resources first.
 */
export function nagViolations(context: Record<string, unknown> = {}, o: { env?: Environment; extra?: (data: Stack, app: FloeAppStack) => void } = {}): string {
  const cdk = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } })
  const d = new FloeDataStack(cdk, 'FloeData', o.env ? { env: o.env } : {})
  const a = new FloeAppStack(cdk, 'FloeApp', { ...(o.env ? { env: o.env } : {}), data: d.data, projectRoot })
  o.extra?.(d, a)
  Validations.of(cdk).addPlugins(new AwsSolutionsChecks(cdk))
  try {
    cdk.synth()
    return ''
  } catch (err) {
    return String((err as Error).message)
  }
}

/**
 * Both stacks synthesized as a cloud assembly on disk (manifest, templates,
 * asset directories), without bundling the functions: what `--assembly` reads.
 */
export function synthAssembly(outdir: string, context: Record<string, unknown> = {}): string {
  const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [], ...context } })
  const data = new FloeDataStack(app, 'FloeData')
  new FloeAppStack(app, 'FloeApp', { data: data.data, projectRoot })
  return app.synth().directory
}
