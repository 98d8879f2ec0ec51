/** An HTTP exchange as tests read it: status, the body parsed as JSON when it is JSON, the raw text, headers. */
export interface Reply {
  status: number
  body: any
  text: string
  headers: Headers
}

/** Sends a request; a non-string `body` is sent as JSON with the JSON content type. */
export async function call(url: string, method: string, init: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Reply> {
  const res = await fetch(url, {
    method,
    headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  })
  const text = await res.text()
  let body: any = text
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body, text, headers: res.headers }
}
