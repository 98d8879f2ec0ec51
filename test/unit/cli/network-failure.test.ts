/** A `--stack` command that cannot reach AWS ends with one line and exit 2, as for missing credentials. */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { networkFailure } from '../../../lib/cli/command'
import { projectRoot } from '../../../lib/local/handlers'

function floe(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(projectRoot, 'bin/floe.mjs'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const aws = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_MAX_ATTEMPTS: '1' }

describe('a deployment that cannot be reached', () => {
  it('an unresolvable endpoint: one line naming the host and the code, exit 2', async () => {
    const r = await floe(['logs', 'enrich', '--stack', 'FloeApp'], { ...aws, AWS_ENDPOINT_URL_CLOUDFORMATION: 'http://nonexistent.invalid' })
    expect(r.stderr).toBe("floe logs: stack 'FloeApp': cannot reach nonexistent.invalid (ENOTFOUND): check the network connection, the region and any AWS_ENDPOINT_URL* setting\n")
    expect(r.code).toBe(2)
  }, 60_000)

  it('nobody listening: ECONNREFUSED, exit 2', async () => {
    const r = await floe(['tail', 'good', '--stack', 'FloeApp'], { ...aws, AWS_ENDPOINT_URL_CLOUDFORMATION: 'http://127.0.0.1:9' })
    expect(r.stderr).toMatch(/^floe tail: stack 'FloeApp': cannot reach 127\.0\.0\.1:9 \(ECONNREFUSED\): check the network connection\n$/)
    expect(r.code).toBe(2)
  }, 60_000)

  it('finds the code on the error or its causes, and nothing on other errors', () => {
    expect(networkFailure(Object.assign(new Error('getaddrinfo EAI_AGAIN x.example'), { code: 'EAI_AGAIN', hostname: 'x.example' }))).toBe(
      'cannot reach x.example (EAI_AGAIN): check the network connection, the region and any AWS_ENDPOINT_URL* setting',
    )
    expect(networkFailure(new Error('wrapped', { cause: Object.assign(new Error('t'), { code: 'ETIMEDOUT', address: '10.0.0.1', port: 443 }) }))).toBe('cannot reach 10.0.0.1:443 (ETIMEDOUT): check the network connection')
    expect(networkFailure(Object.assign(new Error('no'), { code: 'ENOENT' }))).toBeUndefined()
    expect(networkFailure(undefined)).toBeUndefined()
  })
})
