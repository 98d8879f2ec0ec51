/**
 * What the rehearsal's scenarios run against (a running cloud assembly: its
 * HTTP API, its stacks' resolved outputs, the emulators behind it), what
 * each scenario reports, and the helpers they share: a bounded wait for data
 * to land, basic authentication with the sign-in password the scenarios set.
 */
import { randomBytes } from 'node:crypto'
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { KinesisClient } from '@aws-sdk/client-kinesis'
import type { S3Client } from '@aws-sdk/client-s3'
import type { FunctionInventory } from '../../../core/rehearse/inventory'
import { locationFromOutputs, API_URL_OUTPUT } from '../../../infra/outputs'
import type { ResourceNames } from '../../../infra/resources'
import { STORED_AS_IS } from '../../../core/secrets-at-rest'
import { credentialStoreOf, resetCredentials, resetSuperKey } from '../../../aws/secrets'
import type { FunctionCount } from '../functions'

export interface ScenarioTarget {
  /** Base URL of the HTTP API the rehearsal serves (the template's routes and authorizer), without a trailing slash. */
  readonly apiUrl: string
  /**
   * The outputs of every stack, resolved as CloudFormation's `DescribeStacks`
   * would answer them once deployed (output key → value, by stack name; the
   * app stack's `ApiUrl` is `apiUrl`): see `stackOutputs` in
   * lib/core/rehearse/outputs.ts. `floe … --stack` is run against them.
   */
  readonly stackOutputs: Readonly<Record<string, Readonly<Record<string, string>>>>
  /** The app stack's name (default: the stack whose outputs have `ApiUrl`). */
  readonly appStack?: string
  /**
   * The physical names of the tables, streams and buckets (default: read from
   * the app stack's outputs, as `floe … --stack` reads them).
   */
  readonly names?: ResourceNames
  /** SDK clients straight to the emulators (no IAM proxy), to set up (the sign-in password, the registry's super key) and to read back where data landed. */
  readonly clients: { readonly ddb: DynamoDBClient; readonly kinesis: KinesisClient; readonly s3: S3Client }
  /**
   * The emulators' endpoints (`dynamodb`, `kinesis`, `s3`, and `lambda`,
   * `sqs`… when there are), by the SDK's service identifier: the `floe …
   * --stack` child process gets them as `AWS_ENDPOINT_URL_<SERVICE>`, with
   * `cliCredentials`.
   */
  readonly endpoints: Readonly<Record<string, string>>
  /** The credentials of the `floe … --stack` child process (default: the emulators' own key pair, `S3RVER`). */
  readonly cliCredentials?: { readonly accessKeyId: string; readonly secretAccessKey: string }
  /**
   * What is not stood in, with why: a scenario that needs it is recorded as
   * skipped with the reason (absent: available). `enrich`: its mapping does
   * not run (the assembly was synthesized without the licence);
   * `searchStore`: no Data API stands in for Aurora (no `/micro/*`, no
   * loader, no recovery); `queue`: no SQS endpoint (no recovery worker);
   * `cloudwatch`: no CloudWatch endpoint (`/metrics` can only say so).
   */
  readonly unavailable?: { readonly enrich?: string; readonly searchStore?: string; readonly queue?: string; readonly cloudwatch?: string }
  /**
   * The assembly's functions and their invocation counts (FunctionHost's
   * `report()`): with them, a last outcome `functions` names every function
   * the scenarios never invoked (ok when each is explained by `unavailable`).
   */
  readonly functions?: { readonly all: readonly FunctionInventory[]; invocations(): readonly FunctionCount[] }
}

export interface ScenarioOutcome {
  readonly name: string
  readonly ok: boolean
  /** Not run, and why (then `ok` is true): something it needs is not stood in. */
  readonly skipped?: string
  /** What was checked, or what failed (naming what). */
  readonly detail?: string
  readonly ms: number
}

export interface ScenarioOptions {
  /** Only these scenarios (by name), in the order of the list of all. */
  readonly only?: readonly string[]
  /** How long a scenario waits for data to land (default 60 s). */
  readonly waitMs?: number
  /**
   * How long the trackers and recovery scenarios wait for the archive
   * (default 150 s: the archive's mappings batch for up to 60 s, as the
   * template declares).
   */
  readonly archiveWaitMs?: number
  /** Interval of the read-backs while waiting (default 250 ms). */
  readonly pollMs?: number
  /** Where the `floe` command is (default: this project's bin/floe.mjs). */
  readonly floeBin?: string
  readonly log?: (line: string) => void
}

/** A scenario's failure: its message is the outcome's detail. */
export class ScenarioFailure extends Error {}

/** A scenario that does not run: its message is the reason. */
export class ScenarioSkipped extends Error {}

export function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new ScenarioFailure(what)
}

/** What the scenarios of one run share: the resolved target, the sign-in password (set once), the wait. */
export class ScenarioContext {
  readonly names: ResourceNames
  readonly appStack: string
  readonly username = 'floe'
  /** Letters and digits only, as the password rules want. */
  readonly password = `Rehearsal${randomBytes(12).toString('hex')}`
  private signedIn: Promise<void> | undefined
  private superKeyed: Promise<string> | undefined
  readonly waitMs: number
  readonly pollMs: number
  readonly log: (line: string) => void

  constructor(readonly target: ScenarioTarget, readonly options: ScenarioOptions = {}) {
    this.appStack = target.appStack ?? Object.entries(target.stackOutputs).find(([, o]) => o[API_URL_OUTPUT] !== undefined)?.[0] ?? ''
    if (target.names) this.names = target.names
    else {
      const loc = locationFromOutputs(target.stackOutputs[this.appStack] ?? {})
      if (!loc.ok) throw new Error(`the outputs of stack '${this.appStack || '(none with ApiUrl)'}' lack ${loc.missing.join(', ')}`)
      this.names = loc.value.names
    }
    this.waitMs = options.waitMs ?? 60_000
    this.pollMs = options.pollMs ?? 250
    this.log = options.log ?? (() => {})
  }

  url(path: string): string {
    return `${this.target.apiUrl}${path}`
  }

  /** `Authorization` of the sign-in credentials the scenarios set. */
  auth(password = this.password): string {
    return `Basic ${Buffer.from(`${this.username}:${password}`).toString('base64')}`
  }

  /**
   * Sets the sign-in credentials as `floe credentials reset --stack` does
   * (straight to the settings table), once per run, then waits until the
   * authorizer takes them (it reads the stored credentials again after its cache).
   */
  signIn(): Promise<void> {
    this.signedIn ??= (async () => {
      await resetCredentials(credentialStoreOf(this.target.clients.ddb, this.names, STORED_AS_IS), { FLOE_USERNAME: this.username, FLOE_PASSWORD: this.password })
      await this.until('the authorizer to take the new credentials (GET /control-plane/version)', async () => {
        const r = await fetch(this.url('/control-plane/version'), { headers: { authorization: this.auth() } })
        await r.arrayBuffer()
        return r.status === 200 ? true : undefined
      })
    })()
    return this.signedIn
  }

  /**
   * A registry super API key, set as `floe registry superkey --reset --stack`
   * sets it (straight to the settings table), once per run; resolves when the
   * registry takes it (it reads the stored key again after its cache).
   */
  superKey(): Promise<string> {
    this.superKeyed ??= (async () => {
      const key = await resetSuperKey(this.target.clients.ddb, this.names, STORED_AS_IS)
      await this.until('the registry to take the new super key (GET /registry-server/api/meta/server)', async () => {
        const r = await fetch(this.url('/registry-server/api/meta/server'), { headers: { apikey: key } })
        const body = (await r.json().catch(() => ({}))) as { authInfo?: { key?: string[] } }
        return r.status === 200 && (body.authInfo?.key ?? []).includes('CREATE') ? true : undefined
      })
      return key
    })()
    return this.superKeyed
  }

  /**
   * Polls `read` every `pollMs` until it gives a value (not undefined), for at
   * most `waitMs`; fails naming `what` with the last value seen by `last`.
   */
  async until<T>(what: string, read: () => Promise<T | undefined>, last?: () => string, waitMs = this.waitMs): Promise<T> {
    const deadline = Date.now() + waitMs
    let error: unknown
    for (;;) {
      try {
        const v = await read()
        if (v !== undefined) return v
        error = undefined
      } catch (err) {
        if (err instanceof ScenarioFailure) throw err
        error = err
      }
      if (Date.now() >= deadline) {
        const seen = last?.() ?? (error ? String((error as Error).message ?? error) : '')
        throw new ScenarioFailure(`waited ${Math.round(waitMs / 1000)} s for ${what}${seen ? `; last seen: ${seen}` : ''}`)
      }
      await new Promise((r) => setTimeout(r, this.pollMs))
    }
  }
}

/** An HTTP answer read whole: status, headers, body text. */
export async function call(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string; json<T = unknown>(): T }> {
  let r: Response
  try {
    r = await fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(30_000) })
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause
    throw new ScenarioFailure(`${init.method ?? 'GET'} ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`)
  }
  const text = await r.text()
  return {
    status: r.status,
    headers: r.headers,
    text,
    json<T>() {
      try {
        return JSON.parse(text) as T
      } catch {
        throw new ScenarioFailure(`${init.method ?? 'GET'} ${url}: ${r.status}, not JSON: ${text.slice(0, 200)}`)
      }
    },
  }
}

/** Fails unless the answer has the status, naming the request and the body's start. */
export function expectStatus(r: { status: number; text: string }, status: number, what: string): void {
  check(r.status === status, `${what}: ${r.status} (expected ${status}) ${r.text.slice(0, 300)}`)
}
