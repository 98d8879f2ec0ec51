import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { adapt } from '../../../../lib/core/enrich/adapters'
import { CALLRAIL_SCHEMA } from '../../../../lib/core/enrich/adapters/callrail'
import { CLOUDFRONT_SCHEMAS } from '../../../../lib/core/enrich/adapters/cloudfront'
import { GA_CONTEXT_SCHEMAS, GA_SCHEMAS } from '../../../../lib/core/enrich/adapters/googleanalytics'
import { HUBSPOT_SCHEMAS } from '../../../../lib/core/enrich/adapters/hubspot'
import { MAILCHIMP_SCHEMAS } from '../../../../lib/core/enrich/adapters/mailchimp'
import { MAILGUN_SCHEMAS } from '../../../../lib/core/enrich/adapters/mailgun'
import { MANDRILL_SCHEMAS } from '../../../../lib/core/enrich/adapters/mandrill'
import { MARKETO_SCHEMAS } from '../../../../lib/core/enrich/adapters/marketo'
import { OLARK_SCHEMAS } from '../../../../lib/core/enrich/adapters/olark'
import { PAGERDUTY_SCHEMAS } from '../../../../lib/core/enrich/adapters/pagerduty'
import { PINGDOM_SCHEMAS } from '../../../../lib/core/enrich/adapters/pingdom'
import { ADAPTER_SCHEMA_DEFAULTS, schemaOverrides } from '../../../../lib/core/enrich/adapters/schemas'
import { SENDGRID_SCHEMAS } from '../../../../lib/core/enrich/adapters/sendgrid'
import { STATUSGATOR_SCHEMA } from '../../../../lib/core/enrich/adapters/statusgator'
import { UNBOUNCE_SCHEMA } from '../../../../lib/core/enrich/adapters/unbounce'
import { URBANAIRSHIP_SCHEMAS } from '../../../../lib/core/enrich/adapters/urbanairship'
import { VERO_SCHEMAS } from '../../../../lib/core/enrich/adapters/vero'
import { validateConfig } from '../../../../lib/core/enrich/config'
import { resolver } from '../helpers'
import { failures, oneEvent, webhookPayload } from './helpers'

const USED = new Set([
  CALLRAIL_SCHEMA, STATUSGATOR_SCHEMA, UNBOUNCE_SCHEMA, ...CLOUDFRONT_SCHEMAS.values(), ...GA_CONTEXT_SCHEMAS,
  ...[GA_SCHEMAS, HUBSPOT_SCHEMAS, MAILCHIMP_SCHEMAS, MAILGUN_SCHEMAS, MANDRILL_SCHEMAS, MARKETO_SCHEMAS, OLARK_SCHEMAS, PAGERDUTY_SCHEMAS, PINGDOM_SCHEMAS, SENDGRID_SCHEMAS, URBANAIRSHIP_SCHEMAS, VERO_SCHEMAS].flatMap((t) => Object.values(t)),
])
const DEFAULTS = Object.values(ADAPTER_SCHEMA_DEFAULTS).flatMap((t) => Object.values(t))

describe("the webhook adapters' schemas", () => {
  it('are the configurable defaults, one for one, each in the Iglu Central snapshot', () => {
    expect([...USED].sort()).toEqual([...new Set(DEFAULTS)].sort())
    expect(DEFAULTS).toHaveLength(new Set(DEFAULTS).size)
    // Snowplow's table names RICH_HEAD, which Iglu Central does not have (it has RICH_READ)
    const missing = DEFAULTS.filter((uri) => !existsSync(`schemas/iglu-central/schemas/${uri.slice('iglu:'.length)}`))
    expect(missing).toEqual(['iglu:com.urbanairship.connect/RICH_HEAD/jsonschema/1-0-0'])
  })

  it('are replaced where configured', async () => {
    const o = schemaOverrides({ mailchimp: { subscribe: 'iglu:com.acme/subscribe/jsonschema/2-0-0' }, googleAnalytics: { hit: 'iglu:com.acme/hit/jsonschema/1-0-1' } })
    if (!o.ok) throw new Error(o.errors.join('\n'))
    const ctx = { resolver, maxJsonDepth: 40, schemaOverrides: o.overrides }
    const form = { contentType: 'application/x-www-form-urlencoded' }
    const e = oneEvent(await adapt(webhookPayload('com.mailchimp', 'v1', { ...form, body: 'type=subscribe' }), ctx))
    expect((e.ue_pr as any).data.schema).toBe('iglu:com.acme/subscribe/jsonschema/2-0-0')
    const [f] = failures(await adapt(webhookPayload('com.mailchimp', 'v1', { ...form, body: 'type=nope' }), ctx)) as any[]
    expect(f.expectedMapping.subscribe).toBe('iglu:com.acme/subscribe/jsonschema/2-0-0')
    const ga = oneEvent(await adapt(webhookPayload('com.google.analytics', 'v1', { body: 't=pageview&dp=/' }), ctx))
    expect((ga.co as any).data).toEqual([{ schema: 'iglu:com.acme/hit/jsonschema/1-0-1', data: { type: 'pageview' } }])
    // the defaults elsewhere
    expect((oneEvent(await adapt(webhookPayload('com.mailchimp', 'v1', { ...form, body: 'type=profile' }), ctx)).ue_pr as any).data.schema).toBe(MAILCHIMP_SCHEMAS.profile)
  })

  it('are configured by enrich config adaptersSchemas, checked key by key', () => {
    const base = { license: { accept: true }, input: { streamName: 'raw' }, output: { good: { streamName: 'good' }, bad: { streamName: 'bad' }, incomplete: { streamName: 'failed' } } }
    const ok = validateConfig({ ...base, adaptersSchemas: { mandrill: { message_opened: 'iglu:com.mandrill/message_opened/jsonschema/1-0-4', message_sent: MANDRILL_SCHEMAS.send } } })
    if (!ok.ok) throw new Error(ok.errors.join('\n'))
    expect(ok.config.adaptersSchemas).toEqual({ [MANDRILL_SCHEMAS.open!]: 'iglu:com.mandrill/message_opened/jsonschema/1-0-4' })
    expect(schemaOverrides({ constructor: { name: 'iglu:a/b/jsonschema/1-0-0' }, mandrill: { toString: 'iglu:a/b/jsonschema/1-0-0' } })).toMatchObject({
      ok: false,
      errors: [expect.stringMatching(/^adaptersSchemas\.constructor: unknown adapter/), expect.stringMatching(/^adaptersSchemas\.mandrill\.toString: unknown schema/)],
    })
    const bad = validateConfig({ ...base, adaptersSchemas: { mandril: {}, mandrill: { opened: 'x', message_sent: 'not a uri' } } })
    expect(!bad.ok && bad.errors).toEqual([
      expect.stringMatching(/^adaptersSchemas\.mandril: unknown adapter \(one of callrail, cloudfrontAccessLog, googleAnalytics, /),
      expect.stringMatching(/^adaptersSchemas\.mandrill\.opened: unknown schema \(one of message_bounced, /),
      'adaptersSchemas.mandrill.message_sent: must be an Iglu URI such as "iglu:com.mandrill/message_sent/jsonschema/1-0-1", got "not a uri"',
    ])
  })
})
