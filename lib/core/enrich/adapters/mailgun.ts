/**
 * Mailgun (`/com.mailgun/v1`): webhooks posted as JSON (`signature` and
 * `event-data`); `event-data.event` picks the schema. The event is the
 * signature (`timestamp`, `token`, `signature`) merged with the event data,
 * whose `timestamp` becomes the signature's (seconds → date-time); names are
 * camelCased, `body-plain` is dropped and `attachment-count` kept only as an integer.
 */
import { checkBody, cleanMessage, cleanupEvent, events, fail, inputData, lookupSchema, queryParams, unstructParams, type Webhook, schemas } from './common'
import { asInt, at, camelize, deepMerge, isObj, JNum, jsonText, parseTree } from './jtree'

const TRACKER = 'com.mailgun-v1'
const JSON_TYPE = 'application/json'

export const MAILGUN_SCHEMAS: Readonly<Record<string, string>> = {
  bounced: 'iglu:com.mailgun/message_bounced/jsonschema/1-0-0',
  clicked: 'iglu:com.mailgun/message_clicked/jsonschema/1-0-0',
  complained: 'iglu:com.mailgun/message_complained/jsonschema/1-0-0',
  delivered: 'iglu:com.mailgun/message_delivered/jsonschema/1-0-0',
  dropped: 'iglu:com.mailgun/message_dropped/jsonschema/1-0-0',
  opened: 'iglu:com.mailgun/message_opened/jsonschema/1-0-0',
  unsubscribed: 'iglu:com.mailgun/recipient_unsubscribed/jsonschema/1-0-0',
}

export const mailgun: Webhook = (p, ctx) => {
  const b = checkBody(p, JSON_TYPE)
  if (!b.ok) return b.result
  const parsed = parseTree(b.body, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(inputData('body', b.body, `could not parse body: ${cleanMessage(parsed.error)}`))
  const body = parsed.value
  const type = at(body, 'event-data', 'event')
  if (type === undefined) return fail(inputData('body', b.body, 'no `event` parameter provided: cannot determine event type'))
  const typeText = typeof type === 'string' ? type : undefined
  const schema = lookupSchema(typeText, schemas(ctx, MAILGUN_SCHEMAS))
  if (!schema.ok) return fail(schema.failure)
  const signature = at(body, 'signature')
  for (const field of ['timestamp', 'token', 'signature']) {
    if (at(signature, field) === undefined) return fail(inputData(field, null, `missing '${field}'`))
  }
  const data = at(body, 'event-data')
  if (!isObj(data) || !data.has('timestamp') || !isObj(signature)) return fail(inputData('event-data', null, "missing 'event-data'"))
  const withTimestamp = new Map(data)
  withTimestamp.set('timestamp', signature.get('timestamp')!)
  const event = camelize(deepMerge(signature, withTimestamp))
  if (!isObj(event)) return fail(inputData('body', jsonText(event), 'body is not a json object'))
  const attachments = asInt(event.get('attachmentCount'))
  event.delete('bodyPlain')
  event.delete('attachmentCount')
  if (attachments !== undefined) event.set('attachmentCount', new JNum(String(attachments)))
  const cleaned = cleanupEvent(event, typeText === undefined ? undefined : ['event', typeText], ['timestamp'])
  return events(p, [unstructParams(TRACKER, 'srv', queryParams(p), schema.schema, cleaned)])
}
