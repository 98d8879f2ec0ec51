import { App } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
import { projectRoot } from '../../lib/local/handlers'
import { FloeAppStack, FloeDataStack } from '../../lib/infra/stacks'

const cached = new Map<string, { data: Template; app: Template }>()

/** Synthesizes both stacks once per test file and context, without bundling the functions. */
export function synthTemplates(context: Record<string, unknown> = {}): { data: Template; app: Template } {
  const key = JSON.stringify(context)
  let t = cached.get(key)
  if (!t) {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } })
    const data = new FloeDataStack(app, 'FloeData')
    const appStack = new FloeAppStack(app, 'FloeApp', { data: data.data, projectRoot })
    t = { data: Template.fromStack(data), app: Template.fromStack(appStack) }
    cached.set(key, t)
  }
  return t
}

/** The resources of a type whose logical id starts with `prefix` followed by CDK's hash. */
export function resourcesNamed(t: Template, type: string, prefix: string): Record<string, any> {
  const all = t.findResources(type)
  return Object.fromEntries(Object.entries(all).filter(([id]) => new RegExp(`^${prefix}[0-9A-F]{8}$`).test(id)))
}
