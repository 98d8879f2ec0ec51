/**
 * SendGrid (`/com.sendgrid/v3`): the Event Webhook's JSON array of email
 * events; each `event` picks its schema (and is left out), `timestamp`
 * (seconds) becomes a date-time. Events repeating an `sg_event_id` are kept
 * once (the last one), as are events without one.
 */
import { cleanupEvent, fail, inputData, notJson, typedEvents, type Webhook } from './common'
import { parseTree, str, type J } from './jtree'
import { ADAPTER_SCHEMA_DEFAULTS } from './schemas'

const TRACKER = 'com.sendgrid-v3'
const JSON_TYPE = 'application/json'

/** The event types' schemas: the `adaptersSchemas.sendgrid` defaults (the same keys). */
export const SENDGRID_SCHEMAS: Readonly<Record<string, string>> = ADAPTER_SCHEMA_DEFAULTS.sendgrid!

export const sendgrid: Webhook = (p, ctx) => {
  if (p.body === null) return fail(inputData('body', null, 'empty body: no events to process'))
  if (p.contentType === null) return fail(inputData('contentType', null, `no content type: expected ${JSON_TYPE}`))
  if (!p.contentType.includes(JSON_TYPE)) return fail(inputData('contentType', p.contentType, `expected ${JSON_TYPE}`))
  const body = p.body
  const parsed = parseTree(body, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('body', body, parsed.error))
  if (!Array.isArray(parsed.value)) return fail(inputData('body', body, 'body is not a json array'))
  // one event per sg_event_id (events without one count as one id)
  const byId = new Map<string | undefined, [J, number]>()
  parsed.value.forEach((item, index) => byId.set(str(item, 'sg_event_id'), [item, index]))
  return typedEvents(p, ctx, TRACKER, SENDGRID_SCHEMAS, byId.values(), (e) => str(e, 'event'), (e, type) => cleanupEvent(e, type === undefined ? undefined : ['event', type], ['timestamp']))
}
