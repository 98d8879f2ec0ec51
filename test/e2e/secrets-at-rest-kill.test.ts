/**
 * `floe start` killed (kill -9) as soon as it has made the data directory's
 * key file, before or while it stores its secrets: the next start keeps that
 * key (never a new one, which would leave sealed values unopenable), the
 * stored secrets are sealed, and the password works.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { makeClients } from '../../lib/aws/clients'
import { SEALED_PREFIX } from '../../lib/core/secrets-at-rest'
import type { EndpointsFile } from '../../lib/local/cli-start'
import { floe, killOrphanDynamo, type Running } from '../support/process'
import { basicAuth } from '../support/stack'

const PASSWORD = 'KilledStart2024'
const dataDir = mkdtempSync(join(tmpdir(), 'floe-sealed-kill-'))
const env = { FLOE_DATA_DIR: dataDir, PORT: '0', ACCEPT_LIMITED_USE_LICENSE: '', FLOE_USERNAME: 'floe', FLOE_PASSWORD: PASSWORD, FLOE_SUPER_API_KEY: '' }
const started: Running[] = []

afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL')
  killOrphanDynamo(dataDir)
  rmSync(dataDir, { recursive: true, force: true })
})

describe('floe start killed while it seals its secrets', () => {
  it('the next start keeps the key, and every stored secret is sealed and works', async () => {
    const first = floe(['start'], env)
    started.push(first)
    await first.waitFor('secrets at rest: made', 120_000)
    const key = readFileSync(join(dataDir, 'secrets.key'))
    first.child.kill('SIGKILL')
    await first.exited
    killOrphanDynamo(dataDir)

    const second = floe(['start'], env)
    started.push(second)
    await second.waitFor('Floe is up', 120_000)
    expect(second.output()).not.toContain('secrets at rest: made')
    expect(readFileSync(join(dataDir, 'secrets.key')).equals(key)).toBe(true)
    const ep = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as EndpointsFile
    const item = async (pk: string, sk: string) =>
      (await makeClients(ep).ddb.send(new GetItemCommand({ TableName: 'floe-settings', Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }))).Item
    expect((await item('dashboard', 'credentials'))?.hash?.S?.startsWith(SEALED_PREFIX)).toBe(true)
    expect((await item('registry', 'superApiKey'))?.hash?.S?.startsWith(SEALED_PREFIX)).toBe(true)
    expect((await fetch(`${ep.http}/micro/all`, { headers: { authorization: basicAuth('floe', PASSWORD) } })).status).toBe(200)
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  }, 300_000)
})
