/**
 * Vero (`/com.getvero/v1`): one JSON event per request; `type` picks the
 * schema (and is left out), `<type>_at` and `triggered_at` (seconds) become
 * date-times and `_tags` is renamed `tags` (in nested objects too).
 */
import { cleanupEvent, events, fail, inputData, lookupSchema, notJson, queryParams, stringFieldProblem, unstructParams, type Webhook, schemas } from './common'
import { at, isObj, parseTree, type J, type JObj } from './jtree'
import { ADAPTER_SCHEMA_DEFAULTS } from './schemas'

const TRACKER = 'com.getvero-v1'

const VERO_DEFAULTS = ADAPTER_SCHEMA_DEFAULTS.vero!
/** The event types' schemas, from the `adaptersSchemas.vero` defaults (`user_created` and `user_updated` are its `created` and `updated`). */
export const VERO_SCHEMAS: Readonly<Record<string, string>> = {
  bounced: VERO_DEFAULTS.bounced!,
  clicked: VERO_DEFAULTS.clicked!,
  delivered: VERO_DEFAULTS.delivered!,
  opened: VERO_DEFAULTS.opened!,
  sent: VERO_DEFAULTS.sent!,
  unsubscribed: VERO_DEFAULTS.unsubscribed!,
  user_created: VERO_DEFAULTS.created!,
  user_updated: VERO_DEFAULTS.updated!,
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
