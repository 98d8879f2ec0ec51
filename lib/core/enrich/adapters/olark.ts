/**
 * Olark (`/com.olark/v1`): a chat transcript (when it names `operators`) or an
 * offline message, posted as a form whose `data` field holds the JSON; the
 * items' timestamps (seconds with a fraction) become JSON Schema date-times,
 * names are camelCased.
 */
import { checkBody, cleanMessage, events, fail, FORM, formMap, inputData, jsonSchemaDateTime, lookupSchema, notJson, parseForm, queryParams, unstructParams, type Failure, type Webhook, schemas } from './common'
import { camelize, isObj, parseTree, type J } from './jtree'

const TRACKER = 'com.olark-v1'

export const OLARK_SCHEMAS: Readonly<Record<string, string>> = {
  transcript: 'iglu:com.olark/transcript/jsonschema/1-0-0',
  offline_message: 'iglu:com.olark/offline_message/jsonschema/1-0-0',
}

export const olark: Webhook = (p, ctx) => {
  const b = checkBody(p, FORM, { wrongTypeValue: false })
  if (!b.ok) return b.result
  const form = parseForm(b.body)
  if (!form.ok) return fail(inputData(b.body, b.body, `could not parse body: ${cleanMessage(form.error)}`))
  const data = formMap(form.pairs).get('data')
  if (data === undefined || data === '') return fail(inputData('data', null, "missing 'data' field"))
  const parsed = parseTree(data, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('data', data, parsed.error))
  const event = parsed.value
  const type = isObj(event) && event.has('operators') ? 'transcript' : 'offline_message'
  const schema = lookupSchema(type, schemas(ctx, OLARK_SCHEMAS))
  if (!schema.ok) return fail(schema.failure)
  const problem = convertTimestamps(event)
  if (problem !== undefined) return fail(problem)
  return events(p, [unstructParams(TRACKER, 'srv', queryParams(p), schema.schema, camelize(event))])
}

/** `items[*].timestamp` (`seconds[.fraction]`) → date-time, in place; the first bad one is the failure. */
function convertTimestamps(event: J): Failure | undefined {
  if (!isObj(event)) return undefined
  const items = event.get('items')
  if (!Array.isArray(items)) return undefined
  for (const item of items) {
    if (!isObj(item)) continue
    const ts = item.get('timestamp')
    if (typeof ts !== 'string') continue
    // split on '.', trailing empty parts dropped (Java's String.split)
    const parts = ts.split('.')
    if (ts !== '') while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
    let digits: string
    if (parts.length === 1) digits = `${parts[0]}000`
    else if (parts.length === 2) digits = `${parts[0]}${parts[1]!.slice(0, 3).padEnd(3, '0')}`
    else return inputData('timestamp', ts, 'unexpected timestamp format')
    const ms = /^[-+]?[0-9]{1,19}$/.test(digits) ? BigInt(digits) : undefined
    if (ms === undefined || ms > 2n ** 63n - 1n || ms < -(2n ** 63n)) return inputData('timestamp', digits, 'cannot be converted to Double')
    item.set('timestamp', jsonSchemaDateTime(Number(ms)) ?? ts)
  }
  return undefined
}
