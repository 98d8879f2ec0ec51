/**
 * CallRail (`/com.callrail/v1`): a completed call, sent as query string
 * parameters; `first_call` and `answered` become booleans, `duration` an
 * integer, `datetime` (`yyyy-MM-dd HH:mm:ss`, UTC) a JSON Schema date-time,
 * empty values null.
 */
import { events, fail, formatParams, inputData, queryParams, sqlDateTimeToJson, unstructParams, type Webhook, schemaUri } from './common'

const TRACKER = 'com.callrail-v1'
export const CALLRAIL_SCHEMA = 'iglu:com.callrail/call_complete/jsonschema/1-0-2'

const TYPES = { bools: ['first_call', 'answered'], ints: ['duration'], dateTimes: { keys: ['datetime'], convert: sqlDateTimeToJson } }

export const callrail: Webhook = (p, ctx) => {
  const qs = queryParams(p)
  if (qs.size === 0) return fail(inputData('querystring', null, 'empty querystring'))
  return events(p, [unstructParams(TRACKER, 'srv', qs, schemaUri(ctx, CALLRAIL_SCHEMA), formatParams(qs, TYPES))])
}
