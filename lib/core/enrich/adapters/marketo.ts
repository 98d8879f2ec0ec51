/**
 * Marketo (`/com.marketo/v1`): a webhook's JSON object, one event of the
 * Marketo event schema; the lead and event dates (`yyyy-MM-dd HH:mm:ss`,
 * UTC) become date-times, in nested objects too.
 */
import { events, fail, inputData, lookupSchema, notJson, queryParams, sqlDateTimeToJson, unstructParams, type Webhook, schemas } from './common'
import { isObj, parseTree, type J, type JObj } from './jtree'

const TRACKER = 'com.marketo-v1'

export const MARKETO_SCHEMAS: Readonly<Record<string, string>> = { event: 'iglu:com.marketo/event/jsonschema/2-0-0' }

const DATE_FIELDS = ['acquisition_date', 'created_at', 'email_suspended_at', 'last_referred_enrollment', 'last_referred_visit', 'updated_at', 'datetime', 'last_interesting_moment_date']

export const marketo: Webhook = (p, ctx) => {
  if (p.body === null) return fail(inputData('body', null, 'empty body: no events to process'))
  const parsed = parseTree(p.body, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('body', p.body, parsed.error))
  if (!isObj(parsed.value)) return fail(inputData('body', p.body, 'not a json object'))
  const schema = lookupSchema('event', schemas(ctx, MARKETO_SCHEMAS))
  if (!schema.ok) return fail(schema.failure)
  return events(p, [unstructParams(TRACKER, 'srv', queryParams(p), schema.schema, reformat(parsed.value))])
}

/** Marketo's dates as date-times, through nested objects. */
export function reformat(v: J): J {
  if (!isObj(v)) return v
  const out: JObj = new Map()
  for (const [k, x] of v) {
    if (DATE_FIELDS.includes(k)) out.set(k, typeof x === 'string' ? sqlDateTimeToJson(x) : x)
    else out.set(k, isObj(x) ? reformat(x) : x)
  }
  return out
}
