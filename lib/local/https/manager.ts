/**
 * HTTPS of the local stack: a domain submitted on the control plane is
 * checked (it resolves to this server), gets a certificate over ACME (HTTP-01
 * answered on the HTTP port), and is served on `FLOE_HTTPS_PORT` with every
 * route of the HTTP port; plain HTTP then redirects pages and APIs there. The
 * account key, certificate and domain live in `<data dir>/https` (0600) and
 * are served again after a restart; the certificate is renewed in the
 * background, the outcome in the logs, `/health` and the Overview page.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, renameSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { addressProblem, certificateHealth, domainProblem, renewalDue, type HttpsSettings, type HttpsState } from '../../core/https/rules'
import type { DomainAnswer, HttpsControl } from '../../runtime/https'
import { markDown, markUp } from '../../runtime/dependencies'
import type { GatewayTls } from '../gateway'
import { ensurePrivateDir, writePrivateFile } from '../private-files'
import { acmeFailure, certificateInfo, newAccountKey, obtainCertificate } from './acme'
import { answersAsUs, interfaceAddresses, resolveDomain } from './dns'

export const HTTPS_COMPONENT = 'https'

export interface LocalHttpsOptions {
  readonly settings: HttpsSettings
  /** The contents of `FLOE_ACME_CA_FILE`. */
  readonly ca?: string
  /** Where the account key, certificate and domain are kept; in memory only when undefined. */
  readonly dir?: string
  /** The address HTTPS listens on (the gateway's). */
  readonly host: string
  readonly log: (line: string) => void
  /** Longest wait for one answer of the ACME server (default 20 s). */
  readonly requestTimeoutMs?: number
  /** Longest a whole issuance may take before it is given up (default 3 min). */
  readonly issueTimeoutMs?: number
  /** How long the control plane's request waits for the certificate before answering 202 (default 20 s). */
  readonly answerWithinMs?: number
  /** How often the certificate is checked for renewal (default 12 h). */
  readonly renewCheckMs?: number
}

interface Stored {
  readonly domain: string
  readonly key: string
  readonly cert: string
  readonly notBefore: Date
  readonly notAfter: Date
  readonly issuer: string
}

class IssueError extends Error {
  constructor(message: string, readonly status: number) {
    super(message)
  }
}

const withTimeout = <T>(p: Promise<T>, ms: number, message: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new IssueError(message, 504)), ms)
    }),
  ])
}

export class LocalHttps implements HttpsControl, GatewayTls {
  private readonly challenges = new Map<string, string>()
  private stored: Stored | undefined
  private server: Server | undefined
  private handler: ((req: IncomingMessage, res: ServerResponse, secure: boolean) => void) | undefined
  private pending: { domain: string; since: string; step: string; done: Promise<DomainAnswer> } | undefined
  private lastError: HttpsState['lastError']
  private lastRenewal: HttpsState['lastRenewal']
  private problem: string | undefined
  private timer: NodeJS.Timeout | undefined
  private stopped = false

  constructor(private readonly o: LocalHttpsOptions) {}

  private get port(): number {
    return this.o.settings.httpsPort
  }

  private file(name: string): string | undefined {
    return this.o.dir === undefined ? undefined : join(this.o.dir, name)
  }

  /** Serves the stored certificate (from an earlier run), and starts the renewal checks. */
  async start(handler: (req: IncomingMessage, res: ServerResponse, secure: boolean) => void): Promise<void> {
    this.handler = handler
    if (this.o.dir !== undefined) ensurePrivateDir(this.o.dir, this.o.log)
    this.stored = this.load()
    if (this.stored) {
      try {
        await this.listen(this.stored)
        this.o.log(`https: serving ${this.stored.domain} on port ${this.port} (certificate valid until ${this.stored.notAfter.toISOString()})`)
      } catch (err) {
        this.problem = `HTTPS for ${this.stored.domain} cannot listen on ${this.o.host}:${this.port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`
        this.o.log(`https: ${this.problem}`)
      }
    }
    this.refreshHealth()
    this.timer = setInterval(() => void this.checkRenewal(), this.o.renewCheckMs ?? 12 * 60 * 60 * 1000)
    this.timer.unref()
    if (this.stored) void this.checkRenewal()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    markUp(HTTPS_COMPONENT)
    const s = this.server
    this.server = undefined
    if (s) {
      await new Promise<void>((resolve) => {
        s.close(() => resolve())
        s.closeAllConnections()
      })
    }
  }

  challenge(token: string): string | undefined {
    return this.challenges.get(token)
  }

  secureOrigin(): string | undefined {
    if (!this.stored || !this.server?.listening) return undefined
    return `https://${this.stored.domain}${this.port === 443 ? '' : `:${this.port}`}`
  }

  state(): HttpsState {
    const s = this.stored
    return {
      domain: s?.domain,
      httpsPort: this.port,
      url: this.secureOrigin(),
      serving: this.server?.listening === true,
      certificate: s ? { notBefore: s.notBefore.toISOString(), notAfter: s.notAfter.toISOString(), issuer: s.issuer } : undefined,
      pending: this.pending ? { domain: this.pending.domain, since: this.pending.since, step: this.pending.step } : undefined,
      lastError: this.lastError,
      lastRenewal: this.lastRenewal,
      problem: this.problem,
    }
  }

  async submit(domain: string): Promise<DomainAnswer> {
    if (this.pending) {
      return { status: 409, message: `A certificate for ${this.pending.domain} is being obtained (since ${this.pending.since}: ${this.pending.step}); try again when it is done. Its progress: GET /control-plane/domain-name.` }
    }
    const checked = await this.checkAddresses(domain)
    if (checked) return checked
    if (this.pending) return { status: 409, message: `A certificate for ${(this.pending as { domain: string }).domain} is being obtained; try again when it is done.` }
    const done = this.issue(domain, false)
    const wait = this.o.answerWithinMs ?? 20_000
    let timer: NodeJS.Timeout | undefined
    const later = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), wait)
    })
    const answer = await Promise.race([done, later])
    clearTimeout(timer)
    if (answer) return answer
    const step = (this.pending as { step?: string } | undefined)?.step ?? 'in progress'
    return { status: 202, message: `Obtaining a certificate for ${domain} (${step}); the HTTP port keeps serving meanwhile. Follow it on the Overview page or with GET /control-plane/domain-name.` }
  }

  /** Undefined when `domain` resolves to this server only; else the answer saying why not. */
  private async checkAddresses(domain: string): Promise<DomainAnswer | undefined> {
    const r = await resolveDomain(domain, this.o.settings.dnsServers)
    if (r.error !== undefined) return { status: r.status, message: r.error }
    const ours = interfaceAddresses()
    // An address not on an interface (a public address behind NAT) counts when it reaches this server.
    const token = randomBytes(16).toString('hex')
    const expect = randomBytes(16).toString('hex')
    this.challenges.set(token, expect)
    try {
      for (const a of r.addresses) if (!ours.has(a) && (await answersAsUs(a, token, expect))) ours.add(a)
    } finally {
      this.challenges.delete(token)
    }
    const problem = addressProblem(domain, r.addresses, ours)
    return problem === undefined ? undefined : { status: 400, message: `${problem}. Nothing was changed.` }
  }

  /** Obtains a certificate for `domain` and serves it; the answer for the control plane. Nothing changes on failure. */
  private issue(domain: string, renewal: boolean): Promise<DomainAnswer> {
    const since = new Date().toISOString()
    const pending = { domain, since, step: 'starting', done: undefined as unknown as Promise<DomainAnswer> }
    this.pending = pending
    const tokens = new Set<string>()
    const work = async (): Promise<Stored> => {
      const accountKey = await this.accountKey()
      const issued = await obtainCertificate({
        directory: this.o.settings.acmeDirectory,
        email: this.o.settings.acmeEmail,
        ca: this.o.ca,
        accountKey,
        domain,
        requestTimeoutMs: this.o.requestTimeoutMs ?? 20_000,
        setChallenge: (token, ka) => {
          if (this.pending !== pending) return // given up: no more challenges for it
          if (ka === undefined) this.challenges.delete(token)
          else {
            tokens.add(token)
            this.challenges.set(token, ka)
          }
        },
        step: (s) => {
          pending.step = s
        },
      })
      return { domain, ...issued }
    }
    const limit = this.o.issueTimeoutMs ?? 180_000
    pending.done = withTimeout(work(), limit, `the ACME server did not complete the certificate for ${domain} within ${Math.round(limit / 1000)} s (at step: ${pending.step})`)
      .then(async (stored) => {
        if (this.stopped) throw new IssueError('the stack is stopping', 503)
        await this.install(stored)
        this.lastError = undefined
        if (renewal) this.lastRenewal = { at: new Date().toISOString(), ok: true }
        const origin = this.secureOrigin()
        this.o.log(`https: ${renewal ? 'renewed the certificate of' : 'obtained a certificate for'} ${domain} (valid until ${stored.notAfter.toISOString()}); serving ${origin}`)
        return {
          status: 200,
          message: `HTTPS is on: ${origin} serves every page and API with a certificate from ${stored.issuer} valid until ${stored.notAfter.toISOString()}. Plain HTTP now redirects pages and APIs there; the collector paths and /health keep answering on HTTP. The certificate is renewed in the background.`,
        }
      })
      .catch((err) => {
        const reason = err instanceof IssueError ? err.message : acmeFailure(err)
        const status = err instanceof IssueError ? err.status : 502
        this.lastError = { domain, at: new Date().toISOString(), reason, renewal }
        if (renewal) this.lastRenewal = { at: this.lastError.at, ok: false }
        this.o.log(`https: ${renewal ? 'renewal of the certificate of' : 'no certificate for'} ${domain}${renewal ? ' failed' : ''}: ${reason}${this.stored ? `; still serving ${this.stored.domain} (certificate valid until ${this.stored.notAfter.toISOString()})` : ''}`)
        return { status, message: `No certificate for ${domain}: ${reason}. Nothing was changed${this.stored ? ` (HTTPS keeps serving ${this.stored.domain})` : '; the HTTP port keeps serving'}.` }
      })
      .finally(() => {
        for (const t of tokens) this.challenges.delete(t)
        if (this.pending === pending) this.pending = undefined
        this.refreshHealth()
      })
    return pending.done
  }

  /** Serves `stored` (opening the HTTPS port if needed), then keeps it: a port that cannot be opened changes nothing. */
  private async install(stored: Stored): Promise<void> {
    try {
      if (this.server?.listening) this.server.setSecureContext({ key: stored.key, cert: stored.cert })
      else await this.listen(stored)
    } catch (err) {
      throw new IssueError(`the certificate was issued, but HTTPS cannot listen on ${this.o.host}:${this.port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}${this.port < 1024 ? ' (a port below 1024 needs the CAP_NET_BIND_SERVICE capability or root)' : ''}`, 500)
    }
    this.save(stored)
    this.stored = stored
    this.problem = undefined
  }

  private async listen(stored: Stored): Promise<void> {
    const handler = this.handler
    if (!handler) throw new Error('not started')
    const server = createServer({ key: stored.key, cert: stored.cert }, (req, res) => handler(req, res, true))
    server.keepAliveTimeout = 65_000
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, this.o.host, () => {
        server.off('error', reject)
        resolve()
      })
    })
    server.on('error', (err) => this.o.log(`https: ${err.message}`))
    this.server = server
  }

  private async checkRenewal(): Promise<void> {
    const s = this.stored
    if (this.stopped || !s || this.pending) return this.refreshHealth()
    if (!renewalDue(s.notAfter, new Date(), this.o.settings.renewBeforeDays)) return this.refreshHealth()
    this.o.log(`https: the certificate of ${s.domain} expires at ${s.notAfter.toISOString()} (within ${this.o.settings.renewBeforeDays} days): renewing`)
    await this.issue(s.domain, true)
  }

  private refreshHealth(): void {
    if (this.stopped) return
    const reason = certificateHealth(this.state(), new Date())
    if (reason) markDown(HTTPS_COMPONENT, reason)
    else markUp(HTTPS_COMPONENT)
  }

  private async accountKey(): Promise<string> {
    const path = this.file('account-key.pem')
    if (path && existsSync(path)) return readFileSync(path, 'utf8')
    const key = await newAccountKey()
    if (path) writePrivateFile(path, key)
    return key
  }

  /** The certificate files first, the domain last: a run stopped in between keeps the previous state. */
  private save(s: Stored): void {
    if (this.o.dir === undefined) return
    const put = (name: string, data: string) => {
      const path = join(this.o.dir!, name)
      writePrivateFile(`${path}.new`, data)
      renameSync(`${path}.new`, path)
    }
    put(`${s.domain}.key.pem`, s.key)
    put(`${s.domain}.cert.pem`, s.cert)
    put('domain.json', `${JSON.stringify({ domain: s.domain, savedAt: new Date().toISOString() }, null, 2)}\n`)
  }

  private load(): Stored | undefined {
    const path = this.file('domain.json')
    if (!path || !existsSync(path)) return undefined
    try {
      const checked = domainProblem(String((JSON.parse(readFileSync(path, 'utf8')) as { domain?: unknown }).domain ?? ''))
      if (checked.problem !== undefined) throw new Error(checked.problem)
      const domain = checked.domain
      const key = readFileSync(join(this.o.dir!, `${domain}.key.pem`), 'utf8')
      const cert = readFileSync(join(this.o.dir!, `${domain}.cert.pem`), 'utf8')
      const info = certificateInfo(cert)
      if (!info.names.includes(domain)) throw new Error(`the stored certificate is for ${info.names.join(', ')}`)
      return { domain, key, cert, notBefore: info.notBefore, notAfter: info.notAfter, issuer: info.issuer }
    } catch (err) {
      this.o.log(`https: the stored domain and certificate in ${this.o.dir} cannot be used (${(err as Error).message}); submit the domain again on the control plane`)
      return undefined
    }
  }
}
