/**
 * Vero (`/com.getvero/v1`): one JSON event per request; `type` picks the
 * schema (and is left out), `<type>_at` and `triggered_at` (seconds) become
 * date-times and `_tags` is renamed `tags` (in nested objects too).
 */
import { cleanupEvent, events, fail, inputData, lookupSchema, notJson, queryParams, stringFieldProblem, unstructParams, type Webhook, schemas } from './common'
import { at, isObj, parseTree, type J, type JObj } from './jtree'

const TRACKER = 'com.getvero-v1'

export const VERO_SCHEMAS: Readonly<Record<string, string>> = {
  bounced: 'iglu:com.getvero/bounced/jsonschema/1-0-0',
  clicked: 'iglu:com.getvero/clicked/jsonschema/1-0-0',
  delivered: 'iglu:com.getvero/delivered/jsonschema/1-0-0',
  opened: 'iglu:com.getvero/opened/jsonschema/1-0-0',
  sent: 'iglu:com.getvero/sent/jsonschema/1-0-0',
  unsubscribed: 'iglu:com.getvero/unsubscribed/jsonschema/1-0-0',
  user_created: 'iglu:com.getvero/created/jsonschema/1-0-0',
  user_updated: 'iglu:com.getvero/updated/jsonschema/1-0-0',
}

export const vero: Webhook = (p, ctx) => {
  if (p.body === null) return fail(inputData('body', null, 'empty body: no events to process'))
  const parsed = parseTree(p.body, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('body', p.body, parsed.error))
  const typeValue = at(parsed.value, 'type')
  const problem = stringFieldProblem(typeValue, 'type')
  if (problem !== undefined || typeof typeValue !== 'string') return fail(inputData('type', null, `could not extract 'type': ${problem}`))
  const type = typeValue
  const event = renameTags(cleanupEvent(parsed.value, ['type', type], [`${type}_at`, 'triggered_at']))
  const schema = lookupSchema(type, schemas(ctx, VERO_SCHEMAS))
  if (!schema.ok) return fail(schema.failure)
  return events(p, [unstructParams(TRACKER, 'srv', queryParams(p), schema.schema, event)])
}

/** `_tags` → `tags` in objects (recursively through objects). */
export function renameTags(v: J): J {
  if (!isObj(v)) return v
  const out: JObj = new Map()
  for (const [k, x] of v) out.set(k === '_tags' ? 'tags' : k, isObj(x) ? renameTags(x) : x)
  return out
}
