/**
 * HTTPS of the single instance against a real ACME server (Pebble): a domain
 * submitted on the control plane gets a certificate through HTTP-01 answered
 * on the stack's HTTP port, HTTPS serves every route, plain HTTP redirects
 * pages and APIs (the collector stays), a restart serves the stored
 * certificate, and the certificate is renewed in the background.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { request } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { X509Certificate } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../lib/local/stack'
import { sharedEndpoints, TEST_CREDENTIALS, basicAuth, uniquePrefix } from '../support/stack'
import { freePort, startPebble, type Pebble } from '../support/pebble'

const DOMAIN = 'floe.test'

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
  readonly cert?: X509Certificate
}

/** A request over TLS to 127.0.0.1 for `DOMAIN`, trusting `ca` only. */
function httpsGet(port: number, path: string, ca: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, servername: DOMAIN, ca, headers: { host: `${DOMAIN}:${port}`, ...headers }, agent: false }, (res) => {
      let body = ''
      const peer = res.socket && 'getPeerX509Certificate' in res.socket ? (res.socket as import('node:tls').TLSSocket).getPeerX509Certificate() : undefined
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, cert: peer }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function submit(stack: LocalStack, domain: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${stack.url}/control-plane/domain-name`, {
    method: 'POST',
    headers: { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' },
    body: `domain_name=${encodeURIComponent(domain)}`,
  })
  return { status: res.status, text: await res.text() }
}

/** The domain form over HTTPS (plain HTTP redirects the control plane once HTTPS serves). */
async function submitSecure(port: number, ca: string, domain: string): Promise<{ status: number; text: string }> {
  const r = await httpsGet(port, '/control-plane/domain-name', ca, { authorization: basicAuth(), 'content-type': 'application/x-www-form-urlencoded' }, 'POST', `domain_name=${encodeURIComponent(domain)}`)
  return { status: r.status, text: r.body }
}

describe('HTTPS with a certificate from a real ACME server (Pebble)', { timeout: 120_000 }, () => {
  let pebble: Pebble
  let httpPort: number
  let httpsPort: number
  let dataDir: string
  let root: string
  let stack: LocalStack | undefined
  const prefix = uniquePrefix('https')
  const lines: string[] = []

  const start = async (env: Record<string, string> = {}, extra: Partial<LocalStackOptions> = {}) => {
    stack = await startLocalStack({
      endpoints: sharedEndpoints(),
      namePrefix: prefix,
      dataDir,
      port: httpPort,
      triggers: false,
      log: (l) => lines.push(l),
      ...extra,
      environment: {
        FLOE_USERNAME: TEST_CREDENTIALS.username,
        FLOE_PASSWORD: TEST_CREDENTIALS.password,
        FLOE_HTTPS_PORT: String(httpsPort),
        FLOE_ACME_DIRECTORY: pebble.directory,
        FLOE_ACME_CA_FILE: pebble.caFile,
        FLOE_DNS_SERVERS: pebble.dns,
        FLOE_ACME_EMAIL: 'ops@floe.test',
        // (the environment of a stack stays in this process: each start sets every setting it tests)
        FLOE_CERT_RENEW_DAYS: '30',
        ...env,
      },
    })
    return stack
  }
  const stop = async () => {
    await stack?.stop()
    stack = undefined
  }

  beforeAll(async () => {
    httpPort = await freePort()
    httpsPort = await freePort()
    dataDir = mkdtempSync(join(tmpdir(), 'floe-https-'))
    pebble = await startPebble(httpPort)
    root = await pebble.issuingRoot()
  }, 60_000)
  afterAll(async () => {
    await stop()
    await pebble?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('refuses a name that is not a domain, and one that resolves elsewhere, saying where; nothing is served', async () => {
    // settings that cannot work stop the start
    await expect(start({ FLOE_ACME_CA_FILE: join(dataDir, 'missing.pem') })).rejects.toThrow(/FLOE_ACME_CA_FILE .*missing\.pem cannot be read: ENOENT/)
    await expect(start({ FLOE_HTTPS_PORT: '70000', FLOE_DNS_SERVERS: 'dns.example' })).rejects.toThrow(/FLOE_HTTPS_PORT must be a port number[\s\S]*FLOE_DNS_SERVERS must be/)
    const s = await start()
    expect(await submit(s, 'not a domain')).toMatchObject({ status: 400, text: expect.stringContaining('is not a domain name') })
    expect(await submit(s, '10.0.0.1')).toMatchObject({ status: 400, text: expect.stringContaining('top-level domain') })
    await pebble.addA('elsewhere.test', '127.0.0.2')
    const r = await submit(s, 'elsewhere.test')
    expect(r.status).toBe(400)
    expect(r.text).toContain('elsewhere.test resolves to 127.0.0.2, which is not an address of this server')
    expect(r.text).toContain('Nothing was changed')
    expect(s.https.state()).toMatchObject({ domain: undefined, serving: false })
    // the HTTP side keeps working, without redirects
    expect((await fetch(`${s.url}/home`, { headers: { authorization: basicAuth() }, redirect: 'manual' })).status).toBe(200)
  })

  it('obtains a certificate, serves every route over HTTPS, redirects pages and APIs on HTTP, keeps the collector on HTTP', async () => {
    const s = stack!
    const r = await submit(s, DOMAIN)
    expect(r, r.text).toMatchObject({ status: 200 })
    expect(r.text).toContain(`https://${DOMAIN}:${httpsPort}`)
    const health = await httpsGet(httpsPort, '/health', root)
    expect(health).toMatchObject({ status: 200, body: 'ok' })
    expect(health.cert?.subjectAltName).toContain(`DNS:${DOMAIN}`)
    // pages and APIs behind basic authentication, over TLS
    expect((await httpsGet(httpsPort, '/home', root)).status).toBe(401)
    expect((await httpsGet(httpsPort, '/home', root, { authorization: basicAuth() })).status).toBe(200)
    const state = JSON.parse((await httpsGet(httpsPort, '/control-plane/domain-name', root, { authorization: basicAuth() })).body)
    expect(state).toMatchObject({ domain: DOMAIN, serving: true, url: `https://${DOMAIN}:${httpsPort}` })
    // the pages' own requests over TLS pass the cross-site check (their origin is https://…)
    expect((await httpsGet(httpsPort, '/control-plane/restart-services', root, { authorization: basicAuth(), origin: `https://${DOMAIN}:${httpsPort}` }, 'PUT')).status).toBe(200)
    expect((await httpsGet(httpsPort, '/control-plane/restart-services', root, { authorization: basicAuth(), origin: `http://${DOMAIN}:${httpsPort}` }, 'PUT')).status).toBe(403)
    // plain HTTP: pages and APIs move to HTTPS (API calls keep their method: 308)
    const page = await fetch(`${s.url}/home?x=1`, { redirect: 'manual' })
    expect(page.status).toBe(301)
    expect(page.headers.get('location')).toBe(`https://${DOMAIN}:${httpsPort}/home?x=1`)
    const api = await fetch(`${s.url}/control-plane/restart-services`, { method: 'PUT', redirect: 'manual', headers: { authorization: basicAuth() } })
    expect(api.status).toBe(308)
    // the collector and /health keep answering on plain HTTP
    expect((await fetch(`${s.url}/com.snowplowanalytics.snowplow/tp2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ schema: 'iglu:com.snowplowanalytics.snowplow/payload_data/jsonschema/1-0-4', data: [{ e: 'pv', p: 'web', tv: 'js-3.0.0' }] }) })).status).toBe(200)
    expect((await fetch(`${s.url}/i?e=pv`, { redirect: 'manual' })).status).toBe(200)
    expect((await fetch(`${s.url}/health`, { redirect: 'manual' })).status).toBe(200)
    // the challenge path answers nothing but tokens, without basic authentication
    expect((await fetch(`${s.url}/.well-known/acme-challenge/nothing-here`)).status).toBe(404)
    // the keys and the certificate are readable by their owner only
    const dir = join(dataDir, 'https')
    const files = readdirSync(dir)
    expect(files).toEqual(expect.arrayContaining(['account-key.pem', `${DOMAIN}.key.pem`, `${DOMAIN}.cert.pem`, 'domain.json']))
    for (const f of files) expect((statSync(join(dir, f)).mode & 0o777).toString(8)).toBe('600')
    expect(lines.join('\n')).toContain(`https: obtained a certificate for ${DOMAIN}`)
  })

  it('serves the stored certificate again after a restart, without asking the ACME server', async () => {
    const before = (await httpsGet(httpsPort, '/health', root)).cert!.serialNumber
    await stop()
    // an ACME directory that does not answer: the restart must not need it
    const s = await start({ FLOE_ACME_DIRECTORY: 'https://127.0.0.1:9/dir' })
    const after = await httpsGet(httpsPort, '/health', root)
    expect(after).toMatchObject({ status: 200, body: 'ok' })
    expect(after.cert!.serialNumber).toBe(before)
    expect((await fetch(`${s.url}/home`, { redirect: 'manual' })).status).toBe(301)
  })

  it('renews a certificate due for renewal in the background, and serves the new one', async () => {
    const before = (await httpsGet(httpsPort, '/health', root)).cert!.serialNumber
    await stop()
    lines.length = 0
    // every certificate is due: renewed at start and at every check
    const s = await start({ FLOE_CERT_RENEW_DAYS: '36500' }, { https: { renewCheckMs: 60 * 60 * 1000 } })
    await expect.poll(() => s.https.state().lastRenewal?.ok, { timeout: 30_000, interval: 100 }).toBe(true)
    const after = await httpsGet(httpsPort, '/health', root)
    expect(after.status).toBe(200)
    expect(after.cert!.serialNumber).not.toBe(before)
    expect(lines.join('\n')).toContain(`https: renewed the certificate of ${DOMAIN}`)
  })

  it('an ACME server that fails or hangs: a clear 5xx, nothing changed, HTTP and HTTPS keep serving', async () => {
    await stop()
    // a directory that answers 500 to everything
    const failing = await import('node:https').then(({ createServer }) => createServer({ key: readPem(pebble, 'key'), cert: readPem(pebble, 'cert') }, (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/problem+json' })
      res.end(JSON.stringify({ type: 'urn:ietf:params:acme:error:serverInternal', detail: 'the CA is broken' }))
    }))
    // a directory that accepts connections and never answers
    const hanging = await import('node:net').then(({ createServer }) => createServer(() => undefined))
    const failingPort = await listen(failing)
    const hangingPort = await listen(hanging)
    try {
      let s = await start({ FLOE_ACME_DIRECTORY: `https://127.0.0.1:${failingPort}/dir` })
      await pebble.addA('other.test', '127.0.0.1')
      const r = await submitSecure(httpsPort, root, 'other.test')
      expect(r.status).toBe(502)
      expect(r.text).toMatch(/No certificate for other\.test: .*Nothing was changed \(HTTPS keeps serving floe\.test\)/)
      expect((await httpsGet(httpsPort, '/health', root)).status).toBe(200)
      expect(s.https.state()).toMatchObject({ domain: DOMAIN, lastError: { domain: 'other.test' } })
      await stop()
      s = await start({ FLOE_ACME_DIRECTORY: `https://127.0.0.1:${hangingPort}/dir` }, { https: { requestTimeoutMs: 300, issueTimeoutMs: 2_000 } })
      const h = await submitSecure(httpsPort, root, 'other.test')
      expect(h.status).toBeGreaterThanOrEqual(500)
      expect(h.text).toMatch(/No certificate for other\.test: the ACME server .*(gave no answer|did not (answer|complete))/)
      expect(s.https.state()).toMatchObject({ domain: DOMAIN, serving: true, pending: undefined })
      expect((await fetch(`${s.url}/i?e=pv`)).status).toBe(200)
    } finally {
      failing.close()
      hanging.close()
    }
  })
})

function readPem(p: Pebble, which: 'key' | 'cert'): string {
  return readFileSync(which === 'cert' ? p.caFile : p.caFile.replace(/listener\.pem$/, 'listener.key'), 'utf8')
}

function listen(server: import('node:net').Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)))
}

