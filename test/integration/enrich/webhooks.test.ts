import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { encodeCollectorPayload } from '../../../lib/core/thrift/collector-payload'
import { COLLECTOR_PAYLOAD_SCHEMA } from '../../../lib/core/thrift/types'
import { floe } from '../../support/process'

describe('floe enrich --config with webhooks', () => {
  it('serves configured remote adapters and uses configured adapter schemas', async () => {
    const posted: unknown[] = []
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => (body += c.toString('utf8')))
      req.on('end', () => {
        posted.push(JSON.parse(body))
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ events: [{ e: 'pv', p: 'web', tv: 'remote-1', aid: 'remote-app', url: 'https://example.com/from-remote' }] }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/adapt`
    try {
      const dir = mkdtempSync(join(tmpdir(), 'floe-enrich-webhooks-'))
      mkdirSync(join(dir, 'in'))
      const rec = (path: string, querystring: string, contentType: string | undefined, body: string) =>
        encodeCollectorPayload({ schema: COLLECTOR_PAYLOAD_SCHEMA, ipAddress: '10.0.0.1', timestamp: 1714470000000, encoding: 'UTF-8', collector: 'c', path, querystring, contentType, body })
      const FORM = 'application/x-www-form-urlencoded'
      writeFileSync(join(dir, 'in', 'remote'), rec('/com.example/v1', 'x=1', 'application/json', '{"any":"thing"}'))
      writeFileSync(join(dir, 'in', 'profile'), rec('/com.mailchimp/v1', 'aid=mc-profile', FORM, 'type=profile&data%5Bemail%5D=a%40b.c'))
      writeFileSync(join(dir, 'in', 'subscribe'), rec('/com.mailchimp/v1', 'aid=mc-subscribe', FORM, 'type=subscribe&data%5Bemail%5D=a%40b.c'))
      const config = join(dir, 'enrich.hocon')
      writeFileSync(
        config,
        `license.accept = true
input { type = FileSystem, dir = "${join(dir, 'in')}" }
output {
  good { type = FileSystem, file = "${join(dir, 'good')}" }
  incomplete { type = FileSystem, file = "${join(dir, 'incomplete')}" }
  bad { type = FileSystem, file = "${join(dir, 'bad')}" }
}
remoteAdapters { configs = [ { vendor = "com.example", version = "v1", url = "${url}", timeout = "5 seconds" } ] }
adaptersSchemas { mailchimp { subscribe = "iglu:com.acme.private/subscribe/jsonschema/1-0-0" } }`,
      )
      const p = floe(['enrich', '--config', config], { FLOE_IGLU_CENTRAL_URL: '' })
      expect(await p.exited).toBe(0)
      const good = readFileSync(join(dir, 'good'), 'utf8').trim().split('\n').map((l) => l.split('\t'))
      // app_id, v_tracker, event
      expect(good.map((c) => [c[0], c[9], c[5]]).sort()).toEqual([
        ['mc-profile', 'com.mailchimp-v1', 'unstruct'],
        ['remote-app', 'remote-1', 'page_view'],
      ])
      expect(posted).toEqual([{ contentType: 'application/json', queryString: { x: '1' }, headers: [], body: '{"any":"thing"}' }])
      const bad = readFileSync(join(dir, 'bad'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
      expect(bad).toHaveLength(1)
      expect(bad[0].data.failure.messages[0].schemaKey).toBe('iglu:com.acme.private/subscribe/jsonschema/1-0-0')
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
