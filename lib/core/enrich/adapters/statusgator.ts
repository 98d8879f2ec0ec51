/**
 * StatusGator (`/com.statusgator/v1`): a service status change, posted as a
 * form; the fields become the event with camelCase names.
 */
import { checkBody, cleanMessage, events, fail, FORM, inputData, parseForm, queryParams, unstructParams, type Webhook, schemaUri } from './common'
import { camelize, type JObj } from './jtree'
import { toParamMap } from '../querystring'

const TRACKER = 'com.statusgator-v1'
export const STATUSGATOR_SCHEMA = 'iglu:com.statusgator/status_change/jsonschema/1-0-0'

export const statusgator: Webhook = (p, ctx) => {
  const b = checkBody(p, FORM)
  if (!b.ok) return b.result
  const form = parseForm(b.body)
  if (!form.ok) return fail(inputData('body', b.body, `could not parse body: ${cleanMessage(form.error)}`))
  const data: JObj = new Map()
  for (const [k, v] of toParamMap(form.pairs)) data.set(k, v)
  return events(p, [unstructParams(TRACKER, 'srv', queryParams(p), schemaUri(ctx, STATUSGATOR_SCHEMA), camelize(data))])
}
