import { App, Validations } from 'aws-cdk-lib'
import { AwsSolutionsChecks } from 'cdk-nag'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { settingsOrThrow, stackNames } from '../lib/infra/settings'
import { FloeAppStack, FloeDataStack } from '../lib/infra/stacks'

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const app = new App()
// The deploy settings (docs/deploying.md): every invalid one is named. The app stack reads them again and reports warnings (unknown keys, no alarm destination).
let settings
try {
  settings = settingsOrThrow(app.node.getAllContext() as Record<string, unknown>).settings
} catch (err) {
  console.error((err as Error).message)
  process.exit(1)
}
const names = stackNames(settings.stage)
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION }
const tags = { 'floe:stage': settings.stage }
const data = new FloeDataStack(app, names.data, { env, settings, tags, description: `Floe (${settings.stage}): tables, streams and buckets` })
new FloeAppStack(app, names.app, { env, tags, data: data.data, projectRoot, description: `Floe (${settings.stage}): HTTP API, functions, stream triggers, alarms and dashboard` })
// cdk-nag's AwsSolutions pack: a finding that is neither fixed nor acknowledged (lib/infra/nag.ts) stops synthesis.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app))
app.synth()
