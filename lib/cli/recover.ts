/**
 * `floe recover`: selects failed events (bad rows) of the running local
 * stack, applies recovery steps, previews them through enrich in-process
 * (`--dry-run`) or replays them to the raw stream, marking the bad rows.
 */
import { readFileSync } from 'node:fs'
import { parseRecoverRequest, stepsTooLarge, type RecoverResult } from '../core/recover/api'
import type { RecoverReport } from '../core/recover/run'
import type { Command } from './command'
import { usageError, UsageError } from './command'
import { offlineSummary, parseOfflineArgs, recoverOffline } from './recover-offline'
import { recoverOnStack } from './recover-stack'
import { readEndpointsFile, stackTarget, takeTargetOptions, TARGET_USAGE, type Target } from './target'

const USAGE = `recover [--query <query>] [--failure-type <type>] [--since <ISO time>] [--until <ISO time>] [--steps <file> | --config <file>] [--archive] [--limit N] [--dry-run] [--json] ${TARGET_USAGE}
       floe recover --input <file or dir> --config <file> --output <dir> [--json]`

interface Options {
  body: Record<string, unknown>
  json: boolean
}

const VALUED = { '--query': 'query', '--failure-type': 'failureType', '--since': 'since', '--until': 'until', '--steps': 'steps', '--config': 'config', '--limit': 'limit' } as const

export function parseRecoverArgs(args: readonly string[]): Options {
  const body: Record<string, unknown> = {}
  let json = false
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const eq = a.indexOf('=')
    const flag = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a
    if (flag === '--dry-run') body.dryRun = true
    else if (flag === '--json') json = true
    else if (flag === '--archive') body.source = 'archive'
    else if (flag in VALUED) {
      const v = eq > 0 && a.startsWith('--') ? a.slice(eq + 1) : args[++i]
      if (v === undefined || v === '') throw usageError(USAGE, `${flag} needs a value`)
      const key = VALUED[flag as keyof typeof VALUED]
      if (body[key] !== undefined) throw usageError(USAGE, `${flag} is given twice`)
      if (key === 'steps' || key === 'config') {
        if (body.steps !== undefined || body.config !== undefined) throw usageError(USAGE, '--steps and --config do not go together')
        let text: string
        try {
          text = readFileSync(v, 'utf8')
        } catch (err) {
          throw new UsageError(`${flag}: cannot read ${v}: ${(err as Error).message}`)
        }
        const large = stepsTooLarge(text)
        if (large) throw new UsageError(`${flag}: ${v}: ${large}`)
        try {
          body[key] = JSON.parse(text)
        } catch (err) {
          throw new UsageError(`${flag}: ${v} is not JSON: ${(err as Error).message}`)
        }
      } else if (key === 'limit') {
        const n = Number(v)
        if (!Number.isInteger(n) || n < 1) throw new UsageError(`--limit needs a positive whole number, got '${v}'`)
        body.limit = n
      } else body[key] = v
    } else throw usageError(USAGE, `unknown option '${a}'`)
  }
  return { body, json }
}

const selectedPart = (r: RecoverReport) =>
  `${r.selected} selected · ${r.fixed} fixed${r.broken ? ` · ${r.broken} broken by the steps` : ''}${r.unrecoverable ? ` · ${r.unrecoverable} not replayable` : ''}`

/** The counts so far: a preview's verdicts, or a replay's writes. */
const line = (r: RecoverReport) =>
  r.dryRun
    ? `${selectedPart(r)} · ${r.wouldBeGood} would be good · ${r.stillFailing} still failing`
    : `${selectedPart(r)} · ${r.replayed} replayed${r.claimedElsewhere ? ` · ${r.claimedElsewhere} taken by another run` : ''}`

/** What became of a replay's events, as the search store says (only what it says). */
export function outcomeLine(r: RecoverResult): string {
  if (r.nowGood === undefined) return r.replayed > 0 ? ' · not followed in the search store' : ''
  const reason = r.failedAgainReasons?.[0]?.reason
  return [
    r.nowGood > 0 ? ` · ${r.nowGood} now good` : '',
    r.failedAgain ? ` · ${r.failedAgain} failed again${reason ? `: ${reason}` : ''}` : '',
    r.stillPending ? ` · ${r.stillPending} not settled after ${Math.round((r.followedMs ?? 0) / 1000)} s` : '',
    r.untracked ? ` · ${r.untracked} without an event id to follow` : '',
  ].join('') || ' · 0 now good'
}

function summary(r: RecoverResult): string {
  const lines = [r.dryRun ? `Preview (nothing written): ${line(r)}` : `Run ${r.runId}: ${line(r)}${outcomeLine(r)}`]
  if (!r.dryRun && r.replayed > 0) lines.push(`  preview before the replay: ${r.wouldBeGood} would be good · ${r.stillFailing} would fail`)
  if (r.previewError) lines.push(`  enrich could not judge the events: ${r.previewError}`)
  if (r.failedAgainReasons && r.failedAgainReasons.length > 0) {
    lines.push('  failed again:')
    for (const x of r.failedAgainReasons) lines.push(`    ${x.count} × ${x.reason}`)
  }
  if (r.reasons.length > 0) {
    lines.push(r.dryRun ? '  first reasons:' : '  first reasons (preview):')
    for (const x of r.reasons) lines.push(`    ${x.count} × ${x.reason}`)
  }
  if (r.stillPending) lines.push(`  not all replayed events were good or bad again within the wait (FLOE_RECOVER_WAIT_SECONDS): see GET /control-plane/recover/${r.runId}`)
  if (r.more) lines.push('  more bad rows match: run again')
  return `${lines.join('\n')}\n`
}

export const recoverCommand: Command = {
  name: 'recover',
  usage: USAGE,
  summary: 'Replay failed events of the running local stack (or of a deployment, --stack): select bad rows, fix them with recovery steps, preview with --dry-run, or replay them to the raw stream (each bad row once).',
  details: [
    'Selection: --query (the bad index query string, as in the dashboard), --failure-type (schema_violations, …), --since/--until (ISO times, on the failure time),',
    '  --archive (the archived bad rows of the archive bucket instead of the search store; no --query), --limit (most bad rows taken).',
    '--steps <file>: a recovery steps document (schemas/io.floe/recovery_steps/jsonschema/1-0-0).',
    '--config <file>: a snowplow-event-recovery configuration (iglu:com.snowplowanalytics.snowplow/recoveries/jsonschema/2-0-0 … 4-1-0) instead.',
    'Offline (no stack): --input <file or directory of bad rows, one JSON per line, .gz too> --config <file> --output <dir> writes each recovered',
    '  event as a Thrift collector payload file under <dir>/good/ (floe enrich\'s input.dir) and each row it could not recover as a',
    '  recovery_error bad row under <dir>/bad/; prints the counts (--json: one object). Exit code 1 when the input holds no row.',
    '--json prints one JSON object: selected, fixed, broken, replayed, nowGood, failedAgain, stillPending, failedAgainReasons (read from the search store),',
    '  wouldBeGood, stillFailing, reasons (the in-process preview), runId, … Progress goes to stderr.',
    'After a replay the command follows the replayed events by event id in the search store until each is good or failed again,',
    '  for at most FLOE_RECOVER_WAIT_SECONDS (default 60; 0: not followed).',
    'Enrich is built here from FLOE_ENRICH_CONFIG, as floe start builds it. Exit code 1 when the selection matches nothing.',
    '--stack: the deployment\'s recovery worker (stack output RecoverFunctionName) is invoked with your AWS credentials (lambda:InvokeFunction);',
    '  a replay of more than 5,000 bad rows is queued there and followed until it is done.',
  ].join('\n'),
  async run(args) {
    const offline = parseOfflineArgs(args, USAGE)
    if (offline) {
      const r = await recoverOffline(offline)
      process.stdout.write(offline.json ? `${JSON.stringify(r)}\n` : offlineSummary(r))
      return r.rows === 0 ? 1 : 0
    }
    const { target, rest } = takeTargetOptions(args, USAGE)
    const opts = parseRecoverArgs(rest)
    const { recoverWaitMs } = await import('../core/recover/outcome')
    try {
      recoverWaitMs()
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
    const parsed = parseRecoverRequest(opts.body)
    if (!parsed.ok) throw new UsageError(`${parsed.message}${parsed.errors ? `:\n  ${parsed.errors.join('\n  ')}` : ''}`)
    if (target.stack !== undefined) return onStack(await stackTarget({ ...target, stack: target.stack }), opts)
    const ep = readEndpointsFile() as ReturnType<typeof readEndpointsFile> & { postgres?: string }
    if (!ep.postgres) throw new UsageError('the local stack has no search store (endpoints.json names no postgres)')
    ;(await import('../local/attach')).attachToLocalStack(ep)
    const { runRecovery } = await import('../aws/recover-service')
    const { Refusal } = await import('../core/search/query-tree')
    const { RecoveryUnavailable } = await import('../core/recover/api')
    const { closeDatabases } = await import('../aws/database')
    // progress only for a run that lasts: a short run prints its summary alone (on stdout)
    let last = Date.now()
    let result: RecoverResult
    try {
      result = await runRecovery(parsed.value, {
        progress: (r) => {
          const now = Date.now()
          if (now - last < 1000) return
          last = now
          process.stderr.write(`recover: ${line(r)}\n`)
        },
        following: (o) => {
          const now = Date.now()
          if (now - last < 1000) return
          last = now
          process.stderr.write(`recover: following the replayed events in the search store: ${o.nowGood} good · ${o.failedAgain} failed again · ${o.stillPending} not yet\n`)
        },
        ended: (e) => process.stderr.write(`recover: run ${e.runId} was interrupted (${e.reason}); its ${e.released} pending bad row(s) are selectable again\n`),
      })
    } catch (err) {
      await closeDatabases()
      if (err instanceof Refusal) throw new UsageError(`--query: the search store refuses it: ${err.error.reason}`)
      if (err instanceof RecoveryUnavailable) throw new UsageError(err.message)
      throw err
    }
    await closeDatabases()
    process.stdout.write(opts.json ? `${JSON.stringify(result)}\n` : summary(result))
    if (result.selected === 0) {
      process.stderr.write(`floe recover: ${result.message}\n`)
      return 1
    }
    return 0
  },
}

/** `--stack`: the deployment's recovery worker runs the request (a large one in shares, followed here until done). */
async function onStack(target: Target, opts: Options): Promise<number> {
  const a = await recoverOnStack(target, opts.body, {
    progress: (b) => {
      // a done run's totals are the summary printed on stdout next (unless its events are still followed)
      if (b.state === 'done' && !(((b.outcome as { stillPending?: number } | undefined)?.stillPending ?? 0) > 0)) return
      const r = (b.report ?? undefined) as RecoverReport | undefined
      const o = b.outcome as RecoverResult | undefined
      const state = b.state === 'done' || b.state === 'failed' || b.state === 'interrupted' ? b.state : b.state === 'running' ? 'running' : 'queued'
      process.stderr.write(`recover: run ${String(b.runId)} ${state}${r ? `: ${line({ ...r, dryRun: false })}${o ? outcomeLine({ ...r, ...o, dryRun: false }) : ''}` : ''}\n`)
    },
  })
  if (a.status === 400 || a.status === 409) {
    const errors = Array.isArray(a.body.errors) ? `:\n  ${(a.body.errors as string[]).join('\n  ')}` : ''
    throw new UsageError(`${target.description}: ${String(a.body.message)}${errors}`)
  }
  if (a.body.state === 'failed' || a.body.state === 'interrupted') {
    const failure = a.body.failure as { reason?: string } | undefined
    process.stderr.write(`floe recover: run ${String(a.body.runId)} ${a.body.state === 'failed' ? 'failed' : 'was interrupted'}: ${failure?.reason ?? 'no reason recorded'}\n`)
    if (opts.json) process.stdout.write(`${JSON.stringify(a.body)}\n`)
    return 1
  }
  // a queued run's record holds its totals; a run of one request answers its report
  // (with what became of its events, read from the store when it ended)
  const result = (a.body.state === 'done' ? { ...(a.body.report as object), ...((a.body.outcome as object | undefined) ?? {}), runId: a.body.runId, dryRun: false } : a.body) as unknown as RecoverResult
  if (a.status !== 200 && a.status !== 404) throw new Error(`${target.description}: the recovery worker answered ${a.status}: ${String(a.body.message)}`)
  process.stdout.write(opts.json ? `${JSON.stringify(result)}\n` : summary(result))
  if (result.selected === 0) {
    process.stderr.write(`floe recover: ${result.message ?? 'the selection matches no bad row that is not recovered yet'}\n`)
    return 1
  }
  return 0
}
