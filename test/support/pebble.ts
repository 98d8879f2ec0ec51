/**
 * A real ACME server for tests: Debian's Pebble, with pebble-challtestsrv as
 * its DNS (every name answers 127.0.0.1 unless told otherwise) and its HTTP-01
 * validation pointed at a given port of 127.0.0.1.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const PEBBLE = '/usr/bin/pebble'
export const CHALLTESTSRV = '/usr/bin/pebble-challtestsrv'

/** A port of 127.0.0.1 free right now. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export interface Pebble {
  /** The ACME directory URL. */
  readonly directory: string
  /** The PEM file of the root of Pebble's own HTTPS (for FLOE_ACME_CA_FILE). */
  readonly caFile: string
  /** `127.0.0.1:<port>` of the DNS server (for FLOE_DNS_SERVERS). */
  readonly dns: string
  /** The root that signs the certificates Pebble issues. */
  issuingRoot(): Promise<string>
  /** Makes `host` resolve to `address` (A record). */
  addA(host: string, address: string): Promise<void>
  stop(): Promise<void>
}

function started(child: ChildProcess, name: string, ready: RegExp): Promise<void> {
  let out = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${out}`)), 20_000)
    const onData = (d: Buffer) => {
      out += d.toString()
      if (ready.test(out)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}): ${out}`))
    })
  })
}

function get(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode} ${body}`))))
    })
    req.on('error', reject)
    req.end()
  })
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })

/** Starts Pebble and its DNS; HTTP-01 challenges are fetched from 127.0.0.1:`httpPort`. */
export async function startPebble(httpPort: number): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-pebble-'))
  const caFile = join(dir, 'listener.pem')
  const keyFile = join(dir, 'listener.key')
  // Pebble's own HTTPS: a self-signed certificate for 127.0.0.1 and localhost.
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', caFile, '-days', '2', '-subj', '/CN=pebble', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' })
  const [acmePort, mgmtPort, dnsPort, dnsMgmtPort] = [await freePort(), await freePort(), await freePort(), await freePort()]
  const config = join(dir, 'pebble.json')
  writeFileSync(config, JSON.stringify({ pebble: { listenAddress: `127.0.0.1:${acmePort}`, managementListenAddress: `127.0.0.1:${mgmtPort}`, certificate: caFile, privateKey: keyFile, httpPort, tlsPort: await freePort(), ocspResponderURL: '', externalAccountBindingRequired: false } }))
  const dns = spawn(CHALLTESTSRV, ['-dns01', `127.0.0.1:${dnsPort}`, '-http01', '', '-https01', '', '-tlsalpn01', '', '-management', `127.0.0.1:${dnsMgmtPort}`, '-defaultIPv4', '127.0.0.1', '-defaultIPv6', ''], { stdio: ['ignore', 'pipe', 'pipe'] })
  const children: ChildProcess[] = [dns]
  const cleanup = async () => {
    await Promise.all(children.map(stop))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await started(dns, 'pebble-challtestsrv', /Starting management server/)
    const pebble = spawn(PEBBLE, ['-config', config, '-dnsserver', `127.0.0.1:${dnsPort}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // No sleep before validation, no rejected nonces: the tests stay quick and deterministic.
      env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    })
    children.push(pebble)
    await started(pebble, 'pebble', /Listening on: /)
  } catch (err) {
    await cleanup()
    throw err
  }
  return {
    directory: `https://127.0.0.1:${acmePort}/dir`,
    caFile,
    dns: `127.0.0.1:${dnsPort}`,
    issuingRoot: () => get(`https://127.0.0.1:${mgmtPort}/roots/0`, readFileSync(caFile, 'utf8')),
    async addA(host, address) {
      const res = await fetch(`http://127.0.0.1:${dnsMgmtPort}/add-a`, { method: 'POST', body: JSON.stringify({ host: host.endsWith('.') ? host : `${host}.`, addresses: [address] }) })
      if (!res.ok) throw new Error(`add-a: ${res.status} ${await res.text()}`)
    },
    stop: cleanup,
  }
}
