/**
 * Mandrill (`/com.mandrill/v1`): a batch of message events posted as a form
 * whose only field, `mandrill_events`, holds a JSON array; each event's
 * `event` picks its schema (and is left out), `ts` (seconds) becomes a date-time.
 */
import { checkBody, cleanupEvent, fail, FORM, formMap, inputData, notJson, parseForm, typedEvents, type Webhook } from './common'
import { parseTree, str } from './jtree'

const TRACKER = 'com.mandrill-v1'

export const MANDRILL_SCHEMAS: Readonly<Record<string, string>> = {
  hard_bounce: 'iglu:com.mandrill/message_bounced/jsonschema/1-0-2',
  click: 'iglu:com.mandrill/message_clicked/jsonschema/1-0-2',
  deferral: 'iglu:com.mandrill/message_delayed/jsonschema/1-0-2',
  spam: 'iglu:com.mandrill/message_marked_as_spam/jsonschema/1-0-2',
  open: 'iglu:com.mandrill/message_opened/jsonschema/1-0-3',
  reject: 'iglu:com.mandrill/message_rejected/jsonschema/1-0-1',
  send: 'iglu:com.mandrill/message_sent/jsonschema/1-0-1',
  soft_bounce: 'iglu:com.mandrill/message_soft_bounced/jsonschema/1-0-2',
  unsub: 'iglu:com.mandrill/recipient_unsubscribed/jsonschema/1-0-2',
  delivered: 'iglu:com.mandrill/message_delivered/jsonschema/1-0-0',
}

export const mandrill: Webhook = (p, ctx) => {
  const b = checkBody(p, FORM, { emptyBodyOk: true })
  if (!b.ok) return b.result
  const body = b.body
  const form = parseForm(body)
  if (!form.ok) return fail(inputData('body', body, form.error))
  const fields = formMap(form.pairs)
  if (fields.size !== 1) return fail(inputData('body', body, `body should have size 1: actual size ${fields.size}`))
  const text = fields.get('mandrill_events')
  if (text === undefined) return fail(inputData('body', body, 'no `mandrill_events` parameter provided'))
  if (text === '') return fail(inputData('body', body, '`mandrill_events` field is empty'))
  const parsed = parseTree(text, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('mandril_events', text, parsed.error))
  if (!Array.isArray(parsed.value)) return fail(inputData('mandrill_events', text, 'not a json array'))
  const items = parsed.value.map((e, i) => [e, i] as const)
  return typedEvents(p, ctx, TRACKER, MANDRILL_SCHEMAS, items, (e) => str(e, 'event'), (e, type) => cleanupEvent(e, type === undefined ? undefined : ['event', type], ['ts']))
}
