/**
 * Urban Airship Connect (`/com.urbanairship.connect/v1`): one event per
 * request, JSON without a content type; `type` picks the schema, `id`
 * becomes the event id (`eid`) and `occurred` the true timestamp (`ttm`).
 */
import { events, fail, failAll, inputData, isoMillisOf, lookupSchema, notJson, queryParams, stringFieldProblem, unstructParams, type Failure, type Webhook, schemas } from './common'
import { at, parseTree, str } from './jtree'

const TRACKER = 'com.urbanairship.connect-v1'

const TYPES = ['CLOSE', 'CUSTOM', 'FIRST_OPEN', 'IN_APP_MESSAGE_DISPLAY', 'IN_APP_MESSAGE_EXPIRATION', 'IN_APP_MESSAGE_RESOLUTION', 'LOCATION', 'OPEN', 'PUSH_BODY', 'REGION', 'RICH_DELETE', 'RICH_DELIVERY', 'RICH_HEAD', 'SEND', 'TAG_CHANGE', 'UNINSTALL']

export const URBANAIRSHIP_SCHEMAS: Readonly<Record<string, string>> = Object.fromEntries(TYPES.map((t) => [t, `iglu:com.urbanairship.connect/${t}/jsonschema/1-0-0`]))

export const urbanairship: Webhook = (p, ctx) => {
  if (p.body === null) return fail(inputData('body', null, 'empty body: no events to process'))
  if (p.contentType !== null) return fail(inputData('contentType', p.contentType, 'expected no content type'))
  const parsed = parseTree(p.body, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('body', p.body, parsed.error))
  const event = parsed.value
  const failures: Failure[] = []
  for (const field of ['occurred', 'id', 'processed']) {
    const problem = stringFieldProblem(at(event, field), field)
    if (problem !== undefined) failures.push(inputData(field, null, `could not extract '${field}': ${problem}`))
  }
  const schema = lookupSchema(str(event, 'type'), schemas(ctx, URBANAIRSHIP_SCHEMAS))
  if (!schema.ok) failures.push(schema.failure)
  if (failures.length > 0 || !schema.ok) return failAll(failures)
  const occurred = str(event, 'occurred')!
  const ttm = isoMillisOf(occurred)
  if (ttm === undefined) return fail(inputData('occurred', occurred, 'not an ISO-8601 date-time'))
  const qs = queryParams(p)
  qs.set('ttm', String(ttm))
  qs.set('eid', str(event, 'id')!)
  return events(p, [unstructParams(TRACKER, 'srv', qs, schema.schema, event)])
}
