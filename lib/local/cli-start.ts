import { existsSync, readFileSync, rmSync } from 'node:fs'
import { isIPv4 } from 'node:net'
import { resolve, join } from 'node:path'
import { isUuidV4 } from '../core/iglu/apikeys'
import { JavaMissingError } from './emulators'
import { JavaCompilerMissingError } from './dynamodb/launcher'
import { closeTree, ensurePrivateDir, keepCreatedFilesPrivate, writePrivateFile } from './private-files'
import { startLocalStack } from './stack'
import { functions } from '../infra/functions'
import { licenceBannerLine } from '../core/health/report'
import { LICENSE_MESSAGE, noticeText } from '../core/enrich/config'
import { enrichDeployment, outputPlacementErrors } from '../core/enrich/deploy'
import { makeClients } from '../aws/clients'
import { seedTrackingDesign } from '../aws/tracking-design-seed'
import { passwordProblem, usernameProblem } from '../core/auth/basic'
import { firstStartSecrets } from './first-start'
import { httpsFromEnvironment, HttpsSettingsError } from './https/settings'

/** The data directory of the local stack: `FLOE_DATA_DIR`, or `.floe` in the working directory. */
export function dataDir(): string {
  return resolve(process.env.FLOE_DATA_DIR || '.floe')
}

/** What `endpoints.json` holds, so the CLI and tests can find a running stack. */
export interface EndpointsFile {
  readonly http: string
  readonly dynamodb: string
  readonly kinesis: string
  readonly s3: string
  readonly namePrefix: string
  readonly pid: number
  /**
   * The control plane's environment as this stack set it (enrich's configuration with the
   * licence answer, the resolver settings): `floe recover`, in another shell, judges events
   * with it as this stack's enrich does (see `attach.ts`).
   */
  readonly environment?: Readonly<Record<string, string>>
}

function claimDataDir(dir: string): void {
  const pidFile = join(dir, 'floe.pid')
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8'))
    let alive = false
    try {
      if (pid > 0 && pid !== process.pid) {
        process.kill(pid, 0)
        alive = readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('floe')
      }
    } catch {
      alive = false
    }
    if (alive) throw new Error(`The data directory ${dir} is in use by another Floe process (pid ${pid}). Stop it, or set FLOE_DATA_DIR to another directory.`)
  }
  writePrivateFile(pidFile, String(process.pid))
}

/** A URL with its password replaced by `***`, to show. */
function withoutPassword(url: string): string {
  const u = new URL(url)
  if (u.password) u.password = '***'
  return u.toString()
}

/**
 * The address of the emulators for a gateway on `host`: the emulators check no
 * credentials, so they stay on loopback whatever address the gateway is given.
 */
export function emulatorHostFor(host: string): string {
  return host.startsWith('127.') ? host : '127.0.0.1'
}

function timestamp(): string {
  return new Date().toISOString().slice(11, 23)
}

/** `npm start`: the whole stack on this machine, until SIGINT or SIGTERM. */
export async function startFromCli(): Promise<number> {
  const dir = dataDir()
  const host = process.env.FLOE_HOST?.trim() || '127.0.0.1'
  if (!isIPv4(host)) {
    process.stderr.write(`floe: FLOE_HOST must be an IPv4 address for every server to listen on, such as 127.0.0.1; got '${process.env.FLOE_HOST}'\n`)
    return 2
  }
  const port = Number(process.env.PORT || 8080)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`floe: PORT must be a port number, got '${process.env.PORT}'\n`)
    return 2
  }
  const superKey = process.env.FLOE_SUPER_API_KEY?.trim()
  if (superKey && !isUuidV4(superKey)) {
    process.stderr.write('floe: FLOE_SUPER_API_KEY must be a UUID v4 (for example the output of `uuidgen -r`)\n')
    return 2
  }
  const username = process.env.FLOE_USERNAME?.trim()
  const password = process.env.FLOE_PASSWORD?.trim()
  const credentialsProblem = (username && usernameProblem(username)) || (password && passwordProblem(password))
  if (credentialsProblem) {
    process.stderr.write(`floe: ${username && usernameProblem(username) ? 'FLOE_USERNAME' : 'FLOE_PASSWORD'}: ${credentialsProblem}\n`)
    return 2
  }
  const windowText = process.env.FLOE_BATCHING_WINDOW_SECONDS?.trim()
  const windowCap = windowText ? Number(windowText) : undefined
  if (windowCap !== undefined && !(Number.isInteger(windowCap) && windowCap >= 0 && windowCap <= 300)) {
    process.stderr.write(`floe: FLOE_BATCHING_WINDOW_SECONDS must be a whole number of seconds from 0 to 300, got '${windowText}'\n`)
    return 2
  }
  try {
    httpsFromEnvironment(process.env)
  } catch (err) {
    if (!(err instanceof HttpsSettingsError)) throw err
    process.stderr.write(`floe: ${err.message.split('\n').join('\nfloe: ')}\n`)
    return 2
  }
  const log = (line: string) => process.stdout.write(`${timestamp()} ${line}\n`)
  // Enrich's configuration: refused here, with its reasons, when it cannot work on this stack.
  let enrich
  try {
    enrich = enrichDeployment(process.env)
  } catch (err) {
    process.stderr.write(`floe: ${(err as Error).message.split('\n').join('\nfloe: ')}\n`)
    return 2
  }
  const placement = outputPlacementErrors(enrich.outputPlacement, { local: true })
  if (placement.length > 0) {
    process.stderr.write(placement.map((e) => `floe: ${e}\n`).join(''))
    return 2
  }
  for (const n of enrich.notices) log(`warning: enrich: ${noticeText(n)}`)
  const emulatorHost = emulatorHostFor(host)
  if (emulatorHost !== host) log(`FLOE_HOST is ${host}: the gateway (port ${port || 'chosen'}) is reachable from other machines; the emulators listen on ${emulatorHost} only`)
  // Everything this process and its children create is this user's only (the emulators make their
  // files with their own modes, under the umask), and what an older version left open is closed.
  keepCreatedFilesPrivate()
  try {
    ensurePrivateDir(dir, log)
    closeTree(dir, log)
    claimDataDir(dir)
  } catch (err) {
    process.stderr.write(`floe: ${(err as Error).message}\n`)
    return 1
  }
  const started = Date.now()
  log(`starting Floe (data in ${dir})`)
  let stack
  try {
    stack = await startLocalStack({ dataDir: dir, host, emulatorHost, port, log, batchingWindowCapSeconds: windowCap })
  } catch (err) {
    rmSync(join(dir, 'floe.pid'), { force: true })
    if (err instanceof JavaMissingError || err instanceof JavaCompilerMissingError) {
      process.stderr.write(`floe: ${err.message}\n`)
      return 1
    }
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      process.stderr.write(`floe: ${host}:${port} is already in use; set PORT to another port\n`)
      return 1
    }
    throw err
  }
  // The secrets of a first start, shown on this terminal only (never in a log file): the registry's
  // super API key and the pages' password, when generated. Stored before any request can generate them.
  const { lines: secretLines, warnings } = await firstStartSecrets(makeClients(stack.endpoints).ddb, stack.names, process.env)
  for (const w of warnings) log(w)
  // Let the registry check its super API key now, so a problem shows at startup.
  try {
    const res = await fetch(`${stack.url}/registry-server/api/meta/health`)
    if (!res.ok) log(`registry: ${res.status} ${await res.text()}`)
  } catch (err) {
    log(`registry: ${(err as Error).message}`)
  }
  // Tracking design: the organization and API key of FLOE_ORG_ID, FLOE_API_KEY_ID, FLOE_API_KEY, when set.
  await seedTrackingDesign(makeClients(stack.endpoints).ddb, stack.names, process.env, log).catch((err) => log(`tracking design: ${(err as Error).message}`))
  const endpoints: EndpointsFile = { http: stack.url, ...stack.endpoints, namePrefix: 'floe', pid: process.pid, environment: functions.controlPlane.environment }
  const endpointsFile = join(dir, 'endpoints.json')
  // it holds the search store's PostgreSQL URL with its password: readable by this user only
  writePrivateFile(endpointsFile, JSON.stringify(endpoints, null, 2) + '\n')
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  // The signals are handled before the banner is shown: a signal sent as soon as it is read stops
  // the stack in order (before, it would end this process at once and leave DynamoDB Local running).
  let resolveStop!: () => void
  const stopped = new Promise<void>((resolve) => (resolveStop = resolve))
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    log(`${signal}: stopping`)
    stack
      .stop()
      .catch((err) => log(`error while stopping: ${(err as Error).message}`))
      .finally(() => {
        rmSync(endpointsFile, { force: true })
        rmSync(join(dir, 'floe.pid'), { force: true })
        log('stopped')
        resolveStop()
      })
  }
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGHUP', () => stop('SIGHUP'))
  // Started by a launcher such as `npm start`: a signal to the launcher may not reach this
  // process, so when the launcher is gone (this process was re-parented) it stops too.
  // (`npm start` execs this process, so the SIGINT and SIGTERM npm forwards to its script
  // reach it; without the exec, sh would get them, and it does not pass SIGINT on.)
  const parent = process.ppid
  if (process.env.npm_lifecycle_event !== undefined || process.env.FLOE_WATCH_PARENT === '1') {
    const timer = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(timer)
        stop('launcher exited')
      }
    }, 500)
    timer.unref()
  }
  process.stdout.write(
    [
      '',
      `Floe is up in ${seconds}s`,
      `  HTTP API        ${stack.url}  (health: ${stack.url}/health)`,
      ...(stack.https.secureOrigin() ? [`  HTTPS           ${stack.https.secureOrigin()}  (certificate until ${stack.https.state().certificate?.notAfter})`] : []),
      `  home            ${stack.url}/home  ·  dashboard ${stack.url}/dashboard-ui`,
      ...secretLines,
      `  DynamoDB Local  ${stack.endpoints.dynamodb}`,
      `  Kinesis         ${stack.endpoints.kinesis}`,
      `  S3              ${stack.endpoints.s3}`,
      ...(stack.endpoints.postgres
        ? [
            `  search store    ${stack.url}/search-store  ·  Micro API ${stack.url}/micro/all`,
            `  PostgreSQL      ${withoutPassword(stack.endpoints.postgres)}  (schema floe; the URL with the password is in endpoints.json)`,
          ]
        : []),
      `  stream triggers ${[...stack.triggers.keys()].join(', ') || 'none'}`,
      ...[...stack.disabledTriggers].map(([id, reason]) => `  not started     ${id}: ${reason}`),
      ...([...stack.disabledTriggers.values()].includes(LICENSE_MESSAGE) ? [licenceBannerLine(stack.url)] : []),
      `  endpoints file  ${endpointsFile}`,
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  )
  await stopped
  return 0
}
