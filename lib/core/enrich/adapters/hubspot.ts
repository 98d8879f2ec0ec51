/**
 * HubSpot (`/com.hubspot/v1`): a JSON array of CRM subscription events;
 * each `subscriptionType` picks its schema (and is left out), `occurredAt`
 * (milliseconds) becomes a date-time.
 */
import { checkBody, fail, inputData, jsonSchemaDateTime, notJson, typedEvents, type Webhook } from './common'
import { isNum, isObj, parseTree, str, wholeNumber, type J } from './jtree'

const TRACKER = 'com.hubspot-v1'
const JSON_TYPE = 'application/json'

export const HUBSPOT_SCHEMAS: Readonly<Record<string, string>> = {
  'contact.creation': 'iglu:com.hubspot/contact_creation/jsonschema/1-0-0',
  'contact.deletion': 'iglu:com.hubspot/contact_deletion/jsonschema/1-0-0',
  'contact.propertyChange': 'iglu:com.hubspot/contact_change/jsonschema/1-0-0',
  'company.creation': 'iglu:com.hubspot/company_creation/jsonschema/1-0-0',
  'company.deletion': 'iglu:com.hubspot/company_deletion/jsonschema/1-0-0',
  'company.propertyChange': 'iglu:com.hubspot/company_change/jsonschema/1-0-0',
  'deal.creation': 'iglu:com.hubspot/deal_creation/jsonschema/1-0-0',
  'deal.deletion': 'iglu:com.hubspot/deal_deletion/jsonschema/1-0-0',
  'deal.propertyChange': 'iglu:com.hubspot/deal_change/jsonschema/1-0-0',
}

export const hubspot: Webhook = (p, ctx) => {
  if (p.body === null) return fail(inputData('body', null, 'empty body: not events to process'))
  const b = checkBody(p, JSON_TYPE, { emptyBodyOk: true })
  if (!b.ok) return b.result
  const body = b.body
  const parsed = parseTree(body, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('body', body, parsed.error))
  if (!Array.isArray(parsed.value)) return fail(inputData('body', body, 'not a json array'))
  const items = parsed.value.map((e, i) => [e, i] as const)
  return typedEvents(p, ctx, TRACKER, HUBSPOT_SCHEMAS, items, (e) => str(e, 'subscriptionType'), reformat)
}

/** `occurredAt` (ms) → date-time, `subscriptionType` dropped. */
export function reformat(v: J): J {
  if (!isObj(v)) return v
  const out = new Map(v)
  const at = out.get('occurredAt')
  if (isNum(at)) {
    const ms = wholeNumber(at)
    const text = ms === undefined ? undefined : jsonSchemaDateTime(Number(ms))
    if (text !== undefined) out.set('occurredAt', text)
  }
  out.delete('subscriptionType')
  return out
}
