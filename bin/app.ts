import { App } from 'aws-cdk-lib'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FloeAppStack, FloeDataStack } from '../lib/infra/stacks'

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const app = new App()
const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION }
const data = new FloeDataStack(app, 'FloeData', { env, description: 'Floe: tables, streams and buckets' })
new FloeAppStack(app, 'FloeApp', { env, data: data.data, projectRoot, description: 'Floe: HTTP API, functions and stream triggers' })
app.synth()
