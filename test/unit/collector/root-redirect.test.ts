import { afterEach, describe, expect, it } from 'vitest'
import { collectorHttpHandler } from '../../../functions/collector/app'
import { request } from './helpers'

const saved = { config: process.env.FLOE_COLLECTOR_CONFIG, root: process.env.FLOE_COLLECTOR_ROOT_REDIRECT }
afterEach(() => {
  for (const [name, value] of [['FLOE_COLLECTOR_CONFIG', saved.config], ['FLOE_COLLECTOR_ROOT_REDIRECT', saved.root]] as const) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

const handler = collectorHttpHandler(async () => {})
const root = () => handler(request({ method: 'GET', path: '/' }))

describe('the root response', () => {
  it('redirects GET / to the home page where the stack asks for it (the local stack)', async () => {
    delete process.env.FLOE_COLLECTOR_CONFIG
    process.env.FLOE_COLLECTOR_ROOT_REDIRECT = '/home'
    const res = await root()
    expect(res.statusCode).toBe(302)
    expect(res.headers).toMatchObject({ location: '/home' })
  })
  it('keeps the other settings of a given configuration', async () => {
    process.env.FLOE_COLLECTOR_CONFIG = JSON.stringify({ crossDomain: { enabled: true } })
    process.env.FLOE_COLLECTOR_ROOT_REDIRECT = '/home'
    expect((await root()).statusCode).toBe(302)
    expect((await handler(request({ method: 'GET', path: '/crossdomain.xml' }))).statusCode).toBe(200)
  })
  it("a deployment's own rootResponse wins", async () => {
    process.env.FLOE_COLLECTOR_CONFIG = JSON.stringify({ rootResponse: { enabled: true, statusCode: 200, body: 'hello' } })
    process.env.FLOE_COLLECTOR_ROOT_REDIRECT = '/home'
    const res = await root()
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('hello')
  })
  it('answers 404 by default (deployed stacks)', async () => {
    delete process.env.FLOE_COLLECTOR_CONFIG
    delete process.env.FLOE_COLLECTOR_ROOT_REDIRECT
    expect((await root()).statusCode).toBe(404)
  })
})
