/**
 * Obtaining a certificate over ACME (RFC 8555) with the HTTP-01 challenge,
 * through the maintained `acme-client` library: account, order, challenge,
 * finalization and download are its work; this module gives it the settings
 * (directory, contact, trusted roots, time limits) and the challenge store.
 */
import * as acme from 'acme-client'
import { Agent } from 'node:https'
import { rootCertificates } from 'node:tls'

export interface AcmeRequest {
  readonly directory: string
  readonly email?: string
  /** PEM roots trusted for the directory's TLS, besides the system's. */
  readonly ca?: string
  readonly accountKey: string
  readonly domain: string
  /** Longest wait for one answer of the ACME server. */
  readonly requestTimeoutMs: number
  /** Publishes (or, with undefined, withdraws) a token's key authorization on the HTTP port. */
  setChallenge(token: string, keyAuthorization: string | undefined): void
  step(s: string): void
}

export interface Issued {
  readonly key: string
  /** The certificate and its chain, PEM. */
  readonly cert: string
  readonly notBefore: Date
  readonly notAfter: Date
  readonly issuer: string
}

/** A new account key (ECDSA P-256, PEM). */
export async function newAccountKey(): Promise<string> {
  return (await acme.crypto.createPrivateEcdsaKey('P-256')).toString()
}

/** What the issued certificate says (validity, issuer), for a PEM chain. */
export function certificateInfo(cert: string): { notBefore: Date; notAfter: Date; issuer: string; names: string[] } {
  const info = acme.crypto.readCertificateInfo(cert)
  return { notBefore: info.notBefore, notAfter: info.notAfter, issuer: info.issuer.commonName, names: [info.domains.commonName, ...info.domains.altNames] }
}

export async function obtainCertificate(r: AcmeRequest): Promise<Issued> {
  // acme-client's own HTTP client: time limits and, for a test directory, its root.
  acme.axios.defaults.timeout = r.requestTimeoutMs
  acme.axios.defaults.httpsAgent = r.ca === undefined ? undefined : new Agent({ ca: [...rootCertificates, r.ca], keepAlive: false })
  const settings = (acme.axios.defaults as { acmeSettings?: Record<string, number> }).acmeSettings
  if (settings) {
    settings.retryMaxAttempts = 3
    settings.retryDefaultDelay = 1
  }
  const client = new acme.Client({ directoryUrl: r.directory, accountKey: r.accountKey, backoffAttempts: 10, backoffMin: 250, backoffMax: 5_000 })
  r.step('creating the certificate key')
  const key = await acme.crypto.createPrivateEcdsaKey('P-256')
  const [, csr] = await acme.crypto.createCsr({ commonName: r.domain, altNames: [r.domain] }, key)
  r.step(`asking ${r.directory} for a certificate`)
  const cert = await autoWithClearErrors(r, client, {
    csr,
    email: r.email,
    termsOfServiceAgreed: true,
    challengePriority: ['http-01'],
    // The domain check before has seen the name resolve here.
    skipChallengeVerification: true,
    challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
      if (challenge.type !== 'http-01') throw new Error(`the ACME server offers no http-01 challenge (only ${challenge.type})`)
      r.setChallenge(challenge.token, keyAuthorization)
      r.step('waiting for the ACME server to fetch the HTTP-01 challenge on port 80')
    },
    challengeRemoveFn: async (_authz, challenge) => {
      r.setChallenge(challenge.token, undefined)
      r.step('downloading the certificate')
    },
  })
  const info = certificateInfo(cert as string)
  if (!info.names.includes(r.domain)) throw new Error(`the ACME server issued a certificate for ${info.names.join(', ')}, not ${r.domain}`)
  return { key: key.toString(), cert: cert as string, notBefore: info.notBefore, notAfter: info.notAfter, issuer: info.issuer }
}

/**
 * `client.auto`, with acme-client 5.4's answer to a request that got no
 * response at all (refused, reset, timed out) made readable: its retry
 * interceptor then fails with a TypeError about `config`.
 */
async function autoWithClearErrors(r: AcmeRequest, client: acme.Client, opts: acme.ClientAutoOptions): Promise<string> {
  try {
    return await client.auto(opts)
  } catch (err) {
    if (err instanceof TypeError && /reading 'config'/.test(err.message)) {
      throw new Error(`the ACME server ${r.directory} gave no answer (the connection was refused, reset, or got no response within ${r.requestTimeoutMs / 1000} s)`)
    }
    throw err
  }
}

/** A sentence for an ACME failure: the server's problem document when there is one. */
export function acmeFailure(err: unknown): string {
  const e = err as Error & { code?: string; response?: { status?: number; data?: { detail?: string; type?: string } } }
  if (e?.code === 'ECONNABORTED' || /timeout/i.test(e?.message ?? '')) return `the ACME server did not answer in time (${e.message})`
  const detail = e?.response?.data?.detail
  if (detail) return `the ACME server refused: ${detail}${e.response?.data?.type ? ` (${e.response.data.type})` : ''}`
  return (e?.message ?? String(err)).replace(/\s+/g, ' ').slice(0, 400)
}
