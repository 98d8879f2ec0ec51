/**
 * Changing the credentials of the pages takes the current password: without
 * it (400) or with a wrong one (403) nothing is changed.
 */
import { describe, expect, it } from 'vitest'
import { controlPlaneApi, type ControlPlaneDeps } from '../../../lib/core/control-plane/api'
import type { HttpRequest } from '../../../lib/http/types'

const CURRENT = 'CurrentPassword2024'

function api() {
  const changes: [string, string][] = []
  const deps = {
    version: '0.0.0',
    async restart() {},
    async changeCredentials(current: string, username: string, password: string) {
      if (current !== CURRENT) return false
      changes.push([username, password])
      return true
    },
  } as unknown as ControlPlaneDeps
  return { handle: controlPlaneApi(deps), changes }
}

const post = (form: Record<string, string>): HttpRequest => ({
  method: 'POST', path: '/control-plane/credentials', headers: { 'content-type': 'application/x-www-form-urlencoded' }, query: {}, rawQuery: '', cookies: [],
  body: Buffer.from(new URLSearchParams(form).toString()), sourceIp: '127.0.0.1', params: {}, timeEpochMs: 0,
})

describe('POST /control-plane/credentials', () => {
  it('refuses without the current password (400) and with a wrong one (403); nothing is changed', async () => {
    const { handle, changes } = api()
    expect(await handle(post({ new_username: 'ops', new_password: 'NewPassword2024' }))).toMatchObject({ statusCode: 400, body: 'missing parameter current_password: the current password is required to change the credentials\n' })
    expect(await handle(post({ current_password: '', new_username: 'ops', new_password: 'NewPassword2024' }))).toMatchObject({ statusCode: 400 })
    expect(await handle(post({ current_password: 'WrongPassword2024', new_username: 'ops', new_password: 'NewPassword2024' }))).toMatchObject({ statusCode: 403, body: 'the current password is wrong: nothing was changed\n' })
    expect(changes).toEqual([])
  })

  it('changes them with the current password', async () => {
    const { handle, changes } = api()
    expect(await handle(post({ current_password: CURRENT, new_username: 'ops', new_password: 'NewPassword2024' }))).toMatchObject({ statusCode: 200, body: 'changed successfully' })
    expect(changes).toEqual([['ops', 'NewPassword2024']])
  })
})
