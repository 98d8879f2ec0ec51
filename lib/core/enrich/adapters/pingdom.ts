/**
 * Pingdom (`/com.pingdom/v1`): alert webhooks sent as a GET whose `message`
 * parameter holds the alert as JSON; its `action` picks the schema.
 */
import { events, fail, failAll, inputData, lookupSchema, notJson, unstructParams, type Failure, type Webhook, schemas } from './common'
import { isObj, parseTree, str } from './jtree'
import { toParamMap } from '../querystring'

const TRACKER = 'com.pingdom-v1'

export const PINGDOM_SCHEMAS: Readonly<Record<string, string>> = {
  assign: 'iglu:com.pingdom/incident_assign/jsonschema/1-0-0',
  notify_user: 'iglu:com.pingdom/incident_notify_user/jsonschema/1-0-0',
  notify_of_close: 'iglu:com.pingdom/incident_notify_of_close/jsonschema/1-0-0',
}

/** Values that look like Python's repr of a one-element tuple of a unicode string. */
const PYTHON_TUPLE = /^\(u'([^']+)',\)$/

export const pingdom: Webhook = (p, ctx) => {
  if (p.querystring.length === 0) return fail(inputData('querystring', null, 'empty querystring: no events to process'))
  const failures: Failure[] = []
  for (const [k, v] of p.querystring) {
    const m = v === null ? null : PYTHON_TUPLE.exec(v)
    if (m) failures.push(inputData(k, m[1]!, "should not pass regex \\(u'([^']+)',\\)"))
  }
  if (failures.length > 0) return failAll(failures)
  const qs = toParamMap(p.querystring)
  const message = qs.get('message')
  if (message === undefined || message === null) {
    const text = [...qs].map(([k, v]) => `${k}=${v ?? 'null'}`).join('&')
    return fail(inputData('querystring', text, 'no `message` parameter provided'))
  }
  const parsed = parseTree(message, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('message', message, parsed.error))
  const schema = lookupSchema(str(parsed.value, 'action'), schemas(ctx, PINGDOM_SCHEMAS))
  if (!schema.ok) return fail(schema.failure)
  const event = parsed.value
  if (isObj(event)) event.delete('action')
  qs.delete('message')
  return events(p, [unstructParams(TRACKER, 'srv', qs, schema.schema, event)])
}
