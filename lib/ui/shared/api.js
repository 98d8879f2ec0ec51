/**
 * Requests to the stack from the pages (same origin: the browser resends the
 * basic credentials itself). Errors carry the status and the server's own
 * message: Elasticsearch's `error.root_cause[0].reason`, the registry's
 * `message`, or the plain-text body.
 */

export class HttpError extends Error {
  constructor(status, message, body) {
    super(message)
    this.name = 'HttpError'
    this.status = status
    this.body = body
  }
}

/** The message of an error answer. */
export function errorMessage(status, text) {
  let msg = text
  try {
    const j = JSON.parse(text)
    msg = j?.error?.root_cause?.[0]?.reason ?? j?.error?.reason ?? j?.message ?? j?.errors?.[0]?.message ?? text
  } catch {
    // plain text
  }
  msg = String(msg ?? '').trim()
  return msg === '' ? `HTTP ${status}` : msg
}

/**
 * `fetch` with JSON (`json`), form-urlencoded (`form`) or raw (`body`)
 * bodies; a non-2xx answer is thrown as an `HttpError`.
 */
export async function request(path, { method = 'GET', json, form, body, headers = {}, signal } = {}) {
  const init = { method, headers: { ...headers }, cache: 'no-store', credentials: 'same-origin', signal }
  if (json !== undefined) {
    init.headers['content-type'] = 'application/json'
    init.body = JSON.stringify(json)
  } else if (form !== undefined) {
    init.headers['content-type'] = 'application/x-www-form-urlencoded'
    init.body = new URLSearchParams(form).toString()
  } else if (body !== undefined) init.body = body
  let res
  try {
    res = await fetch(path, init)
  } catch (err) {
    if (err?.name === 'AbortError') throw err
    throw new HttpError(0, `the stack did not answer (${err?.message ?? err})`)
  }
  if (!res.ok) {
    const text = await res.text()
    let body
    try {
      body = JSON.parse(text)
    } catch {
      // plain text
    }
    throw new HttpError(res.status, errorMessage(res.status, text), body)
  }
  return res
}

export const getJson = async (path, opts) => (await request(path, opts)).json()
export const getText = async (path, opts) => (await request(path, opts)).text()

/** The time field of each index of the search store. */
export const TIME_FIELD = { good: 'collector_tstamp', bad: 'data.failure.timestamp' }

/** `_search` with a JSON body. */
export async function search(index, body, signal) {
  return (await request(`/search-store/${index}/_search`, { method: 'POST', json: body, signal })).json()
}

/** `_count` with a query string (`q=`). */
export async function count(index, q, signal) {
  const r = await getJson(`/search-store/${index}/_count?q=${encodeURIComponent(q)}`, { signal })
  return r.count
}

/** The query strings of the live counters: the last hour of each index. */
export const LAST_HOUR = {
  good: 'collector_tstamp:[now-1h TO now]',
  bad: 'data.failure.timestamp:[now-1h TO now]',
  // failed events are kept out of the good index: their bad rows (schema violations, enrichment failures) count them
  failed: 'data.failure.timestamp:[now-1h TO now] AND (schema:*schema_violations* OR schema:*enrichment_failures*)',
}
