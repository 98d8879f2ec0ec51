import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { functions } from '../../lib/infra/functions'
import { projectRoot } from '../../lib/local/handlers'

it('`npx cdk synth` works offline without credentials and bundles every function', async () => {
  const out = mkdtempSync(join(tmpdir(), 'floe-cdk-'))
  try {
    const env = { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: '', HOME: out, CDK_DISABLE_CLI_TELEMETRY: 'true' }
    const child = spawn('npx', ['cdk', 'synth', '--quiet', '--output', out], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let log = ''
    child.stdout.on('data', (d) => (log += d))
    child.stderr.on('data', (d) => (log += d))
    const code = await new Promise((r) => child.once('exit', r))
    expect(code, log).toBe(0)
    const template = JSON.parse(readFileSync(join(out, 'FloeApp.template.json'), 'utf8'))
    const fns = Object.values(template.Resources).filter((r: any) => r.Type === 'AWS::Lambda::Function')
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
}, 120_000)
