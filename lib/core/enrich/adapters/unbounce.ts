/**
 * Unbounce (`/com.unbounce/v1`): a landing page form submission, posted as a
 * form with `page_id`, `page_name`, `variant`, `page_url` and `data.json`
 * (the submitted fields as JSON); `data.xml` is dropped, names are camelCased.
 */
import { checkBody, cleanMessage, events, fail, FORM, formMap, inputData, notJson, parseForm, queryParams, unstructParams, type Webhook, schemaUri } from './common'
import { camelize, parseTree, type J } from './jtree'

const TRACKER = 'com.unbounce-v1'
export const UNBOUNCE_SCHEMA = 'iglu:com.unbounce/form_post/jsonschema/1-0-0'

export const unbounce: Webhook = (p, ctx) => {
  const b = checkBody(p, FORM)
  if (!b.ok) return b.result
  const form = parseForm(b.body)
  if (!form.ok) return fail(inputData(b.body, b.body, `could not parse body: ${cleanMessage(form.error)}`))
  const body = formMap(form.pairs)
  for (const field of ['page_id', 'page_name', 'variant', 'page_url', 'data.json']) {
    if (!body.has(field)) return fail(inputData(field, null, `missing '${field}' field in body`))
  }
  const dataJson = body.get('data.json')!
  if (dataJson === '') return fail(inputData('data.json', null, "empty 'data.json' field in body"))
  const parsed = parseTree(dataJson, ctx.maxJsonDepth)
  if (!parsed.ok) return fail(notJson('data.json', dataJson, parsed.error))
  const event = new Map<string, J>([['data.json', parsed.value]])
  for (const [k, v] of body) if (k !== 'data.json' && k !== 'data.xml') event.set(k, v)
  return events(p, [unstructParams(TRACKER, 'srv', queryParams(p), schemaUri(ctx, UNBOUNCE_SCHEMA), camelize(event))])
}
