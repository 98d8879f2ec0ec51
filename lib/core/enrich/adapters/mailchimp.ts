/**
 * Mailchimp (`/com.mailchimp/v1`): list and campaign webhooks posted as a
 * form; `type` picks the schema, bracketed names (`data[merges][EMAIL]`)
 * become nested objects, `fired_at` (`yyyy-MM-dd HH:mm:ss`, UTC) a date-time.
 * Form fields win over query string parameters of the same name.
 */
import { checkBody, events, fail, FORM, formParams, inputData, lookupSchema, parseForm, queryParams, sqlDateTimeToJson, unstructParams, type Params, type Webhook, schemas } from './common'
import { deepMerge, type J, type JObj } from './jtree'

const TRACKER = 'com.mailchimp-v1'

export const MAILCHIMP_SCHEMAS: Readonly<Record<string, string>> = {
  subscribe: 'iglu:com.mailchimp/subscribe/jsonschema/1-0-0',
  unsubscribe: 'iglu:com.mailchimp/unsubscribe/jsonschema/1-0-0',
  campaign: 'iglu:com.mailchimp/campaign_sending_status/jsonschema/1-0-0',
  cleaned: 'iglu:com.mailchimp/cleaned_email/jsonschema/1-0-0',
  upemail: 'iglu:com.mailchimp/email_address_change/jsonschema/1-0-0',
  profile: 'iglu:com.mailchimp/profile_update/jsonschema/1-0-0',
}

export const mailchimp: Webhook = (p, ctx) => {
  const b = checkBody(p, FORM, { emptyBodyOk: true })
  if (!b.ok) return b.result
  const body = b.body
  const form = parseForm(body)
  if (!form.ok) return fail(inputData('body', body, form.error))
  const fields = formParams(form.pairs)
  const type = fields.get('type')
  if (type === undefined || type === null) return fail(inputData('body', body, 'no `type` parameter provided: cannot determine event type'))
  const schema = lookupSchema(type, schemas(ctx, MAILCHIMP_SCHEMAS))
  if (!schema.ok) return fail(schema.failure)
  const firedAt = fields.get('fired_at')
  if (firedAt !== undefined && firedAt !== null) fields.set('fired_at', sqlDateTimeToJson(firedAt))
  const all: Params = queryParams(p)
  for (const [k, v] of fields) all.set(k, v)
  // bracketed names nest objects: no deeper than any other JSON enrich reads
  for (const k of fields.keys()) {
    if (formKeys(k).length >= ctx.maxJsonDepth) return fail(inputData('body', k, `field name nests deeper than the maximum JSON depth (${ctx.maxJsonDepth})`))
  }
  return events(p, [unstructParams(TRACKER, 'srv', all, schema.schema, nest(all))])
}

/** `a[b][c]` → ["a", "b", "c"] (Java's split: trailing empty parts dropped). */
export function formKeys(name: string): string[] {
  if (name === '') return ['']
  const keys = name.split(/\]?(?:\[|\])/)
  while (keys.length > 0 && keys[keys.length - 1] === '') keys.pop()
  return keys.length === 0 ? [''] : keys
}

/** The fields (all but `nuid`, `aid`, `cv`, `p`; those without a value skipped) as one nested object. */
export function nest(params: Params): J {
  let out: JObj | undefined = undefined
  for (const [k, v] of params) {
    if (k === 'nuid' || k === 'aid' || k === 'cv' || k === 'p' || v === null) continue
    const keys = formKeys(k)
    let value: J = v
    for (let i = keys.length - 1; i >= 1; i--) value = new Map([[keys[i]!, value]])
    const one: JObj = new Map([[keys[0]!, value]])
    out = out === undefined ? one : deepMerge(out, one)
  }
  return out ?? null
}
