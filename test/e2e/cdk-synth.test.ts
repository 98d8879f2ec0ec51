import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { functions } from '../../lib/infra/functions'
import { projectRoot } from '../../lib/local/handlers'

/**
 * The deploy command of the deploy guide (docs/deploying.md), synthesized offline without credentials
 * with its flags and its licence setting: every function bundled, each bundle loading on its own.
 * (One synth: each bundles every function, which is most of its time.)
 */
it('`npx cdk synth` with the deploy guide\'s flags works offline, bundles every function, and gives the licence, alarm e-mail and custom domain', async () => {
  const out = mkdtempSync(join(tmpdir(), 'floe-cdk-guide-'))
  try {
    const env = { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: '', HOME: out, CDK_DISABLE_CLI_TELEMETRY: 'true', ACCEPT_LIMITED_USE_LICENSE: 'yes' }
    const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-4b5a-4968-8776-5a4b3c2d1e0f'
    const args = ['cdk', 'synth', '--all', '--quiet', '--output', out, '-c', 'alarmEmail=ops@example.com', '-c', 'domainName=collector.example.com', '-c', `certificateArn=${certificateArn}`]
    const child = spawn('npx', args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let log = ''
    child.stdout.on('data', (d) => (log += d))
    child.stderr.on('data', (d) => (log += d))
    const code = await new Promise((r) => child.once('exit', r))
    expect(code, log).toBe(0)
    const app = JSON.parse(readFileSync(join(out, 'FloeApp.template.json'), 'utf8')) as { Resources: Record<string, any>; Outputs: Record<string, any> }
    const data = JSON.parse(readFileSync(join(out, 'FloeData.template.json'), 'utf8')) as { Resources: Record<string, any> }
    const ofType = (t: { Resources: Record<string, any> }, type: string) => Object.values(t.Resources).filter((r) => r.Type === type)
    // ACCEPT_LIMITED_USE_LICENSE=yes at deploy time: every stream trigger is on, enrich's included
    const mappings = ofType(app, 'AWS::Lambda::EventSourceMapping')
    expect(mappings.length).toBeGreaterThan(0)
    expect(mappings.filter((m) => m.Properties.Enabled === false)).toEqual([])
    // the alarm e-mail is subscribed
    expect(ofType(app, 'AWS::SNS::Subscription').map((s) => [s.Properties.Protocol, s.Properties.Endpoint])).toContainEqual(['email', 'ops@example.com'])
    // the custom domain: its ACM certificate, a mapping to the HTTP API, and the output to point DNS at
    const domains = ofType(app, 'AWS::ApiGatewayV2::DomainName')
    expect(domains).toHaveLength(1)
    expect(domains[0].Properties).toMatchObject({ DomainName: 'collector.example.com', DomainNameConfigurations: [expect.objectContaining({ CertificateArn: certificateArn })] })
    expect(ofType(app, 'AWS::ApiGatewayV2::ApiMapping')).toHaveLength(1)
    expect(Object.keys(app.Outputs)).toEqual(expect.arrayContaining(['ApiUrl', 'ApiDomainTarget', 'AlarmTopicArn', 'DashboardName', 'SettingsTableName', 'RawStreamName']))
    // what `cdk destroy` leaves behind (the guide lists it): every table, stream, bucket and the database are retained
    const retained = Object.values(data.Resources).filter((r) => r.DeletionPolicy === 'Retain').map((r) => r.Type as string)
    for (const type of ['AWS::DynamoDB::GlobalTable', 'AWS::Kinesis::Stream', 'AWS::S3::Bucket', 'AWS::RDS::DBCluster']) expect(retained, type).toContain(type)
    const appRetained = new Set(Object.values(app.Resources).filter((r) => r.DeletionPolicy === 'Retain').map((r) => r.Type as string))
    expect([...appRetained].sort()).toEqual(['AWS::Logs::LogGroup'])
    const fns = Object.values(app.Resources).filter((r: any) => r.Type === 'AWS::Lambda::Function')
    expect(fns).toHaveLength(Object.keys(functions).length)
    const assets = readdirSync(out).filter((f) => f.startsWith('asset.'))
    for (const a of assets) expect(readdirSync(join(out, a))).toEqual(expect.arrayContaining(['index.mjs', 'schemas']))
    // The data files a function reads at run time ship next to its bundle; the Iglu Central snapshot only where schemas are resolved.
    const withRules = assets.filter((a) => existsSync(join(out, a, 'package-files', 'uap-core', 'regexes.yaml')))
    const withSnapshot = assets.filter((a) => existsSync(join(out, a, 'schemas', 'iglu-central', 'schemas')))
    expect(withRules).toHaveLength(Object.values(functions).filter((f) => (f as { packageFiles?: string[] }).packageFiles?.includes('uap-core/regexes.yaml')).length)
    expect(withSnapshot).toHaveLength(Object.values(functions).filter((f) => (f as { resolvesSchemas?: boolean }).resolvesSchemas).length)
    // Each bundle loads on its own and exports its handler (the AWS SDK is provided by the runtime).
    symlinkSync(join(projectRoot, 'node_modules'), join(out, 'node_modules'))
    for (const a of assets) {
      const probe = `import(${JSON.stringify(join(out, a, 'index.mjs'))}).then((m) => process.exit(typeof m.handler === 'function' ? 0 : 3))`
      const loader = spawn(process.execPath, ['--input-type=module', '-e', probe], { cwd: out, env: { ...process.env, FLOE_SCHEMAS_DIR: join(out, a, 'schemas') }, stdio: ['ignore', 'pipe', 'pipe'] })
      let err = ''
      loader.stderr.on('data', (d) => (err += d))
      expect(await new Promise((r) => loader.once("exit", r)), `${a}: ${err.slice(-1500)}`).toBe(0)
    }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}, 600_000)
