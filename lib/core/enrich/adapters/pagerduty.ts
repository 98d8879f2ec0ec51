/**
 * PagerDuty (`/com.pagerduty/v1`): the v1 webhook's JSON `messages`, each
 * an `incident.*` event of the incident schema; `type` loses its `incident.`
 * prefix, `"null"` strings become null and the ` 00:00` offsets of
 * `created_on` / `last_status_change_on` become `+00:00` (in nested objects too).
 */
import { checkBody, events, fail, failAll, inputData, lookupSchema, notJson, queryParams, unstructParams, type Failure, type Params, type Webhook, schemas } from './common'
import { at, isObj, parseTree, str, type J, type JObj } from './jtree'

const TRACKER = 'com.pagerduty-v1'
const JSON_TYPE = 'application/json'
const INCIDENT = 'iglu:com.pagerduty/incident/jsonschema/1-0-0'

export const PAGERDUTY_SCHEMAS: Readonly<Record<string, string>> = Object.fromEntries(
  ['trigger', 'acknowledge', 'unacknowledge', 'resolve', 'assign', 'escalate', 'delegate'].map((t) => [`incident.${t}`, INCIDENT]),
)

export const pagerduty: Webhook = (p, ctx) => {
  const b = checkBody(p, JSON_TYPE, { emptyBodyOk: true })
  if (!b.ok) return b.result
  const body = b.body
  const parsed = parseTree(body, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('body', body, parsed.error))
  const messages = at(parsed.value, 'messages')
  if (!Array.isArray(messages)) return fail(inputData('messages', body, 'field `messages` is not an array'))
  const qs = queryParams(p)
  const out: Params[] = []
  const failures: Failure[] = []
  messages.forEach((event, index) => {
    const schema = lookupSchema(str(event, 'type'), schemas(ctx, PAGERDUTY_SCHEMAS), index)
    if (!schema.ok) failures.push(schema.failure)
    else out.push(unstructParams(TRACKER, 'srv', qs, schema.schema, reformat(event)))
  })
  if (failures.length > 0) return failAll(failures)
  return events(p, out)
}

/** A PagerDuty date-time with its ` 00:00` offset as `+00:00`. */
export const formatDatetime = (dt: string): string => dt.replace(/ 00:00$/, '+00:00')

/** PagerDuty's values made schema-friendly (objects only, recursively; arrays are left as they are). */
export function reformat(v: J): J {
  if (!isObj(v)) return v
  const out: JObj = new Map()
  for (const [k, x] of v) {
    if (x === 'null') out.set(k, null)
    else if (k === 'type' && typeof x === 'string') out.set(k, x.split('incident.').join(''))
    else if ((k === 'created_on' || k === 'last_status_change_on') && typeof x === 'string') out.set(k, formatDatetime(x))
    else if (isObj(x)) out.set(k, reformat(x))
    else out.set(k, x)
  }
  return out
}
