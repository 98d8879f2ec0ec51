/**
 * POST /control-plane/license takes accept=yes from a signed-in user; anything
 * else is a 400 and nothing is recorded.
 */
import { describe, expect, it } from 'vitest'
import { controlPlaneApi, licenceFormProblem, type ControlPlaneDeps } from '../../../lib/core/control-plane/api'
import type { HttpRequest } from '../../../lib/http/types'

function api() {
  const accepted: [string, string][] = []
  const deps = {
    version: '0.0.0',
    now: () => new Date('2026-01-02T03:04:05.000Z'),
    async acceptLicence(by: string, at: Date) {
      accepted.push([by, at.toISOString()])
      return 'enrich starts processing the waiting records'
    },
  } as unknown as ControlPlaneDeps
  return { handle: controlPlaneApi(deps), accepted }
}

const post = (body: string, user: string | null = 'ops'): HttpRequest => ({
  method: 'POST', path: '/control-plane/license', headers: { 'content-type': 'application/x-www-form-urlencoded' }, query: {}, rawQuery: '', cookies: [],
  body: Buffer.from(body), sourceIp: '127.0.0.1', params: {}, timeEpochMs: 0, ...(user ? { user } : {}),
})

describe('the licence form', () => {
  it('says yes only with accept=yes', () => {
    expect(licenceFormProblem({ accept: 'yes' })).toBeUndefined()
    expect(licenceFormProblem({ accept: ' YES ' })).toBeUndefined()
    expect(licenceFormProblem({})).toBe('missing parameter accept: send accept=yes to accept the licence')
    for (const v of ['', 'no', 'true', 'on', 'y']) expect(licenceFormProblem({ accept: v })).toMatch(/^accept must be yes to accept the licence/)
  })
})

describe('POST /control-plane/license', () => {
  it('refuses anything but accept=yes (400) and records nothing', async () => {
    const { handle, accepted } = api()
    expect(await handle(post(''))).toMatchObject({ statusCode: 400, body: 'missing parameter accept: send accept=yes to accept the licence\n' })
    expect(await handle(post('accept=no'))).toMatchObject({ statusCode: 400, body: "accept must be yes to accept the licence (got 'no'): nothing was recorded\n" })
    expect(await handle(post('accept=yes', null))).toMatchObject({ statusCode: 403 })
    expect(accepted).toEqual([])
  })

  it('records the signed-in user and the time with accept=yes', async () => {
    const { handle, accepted } = api()
    expect(await handle(post('accept=yes'))).toMatchObject({ statusCode: 200, body: 'licence accepted by ops: enrich starts processing the waiting records\n' })
    expect(accepted).toEqual([['ops', '2026-01-02T03:04:05.000Z']])
  })
})
