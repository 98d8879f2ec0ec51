import { App } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
import { projectRoot } from '../../lib/local/handlers'
import { FloeAppStack, FloeDataStack } from '../../lib/infra/stacks'

let cached: { data: Template; app: Template } | undefined

/** Synthesizes both stacks once per test file, without bundling the functions. */
export function synthTemplates(): { data: Template; app: Template } {
  if (!cached) {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } })
    const data = new FloeDataStack(app, 'FloeData')
    const appStack = new FloeAppStack(app, 'FloeApp', { data: data.data, projectRoot })
    cached = { data: Template.fromStack(data), app: Template.fromStack(appStack) }
  }
  return cached
}

/** The resources of a type whose logical id starts with `prefix` followed by CDK's hash. */
export function resourcesNamed(t: Template, type: string, prefix: string): Record<string, any> {
  const all = t.findResources(type)
  return Object.fromEntries(Object.entries(all).filter(([id]) => new RegExp(`^${prefix}[0-9A-F]{8}$`).test(id)))
}
