import type { HttpHandler, HttpRequest, HttpResponse } from './types'
import { json } from './types'

interface Route {
  method: string
  segments: string[]
  handler: HttpHandler
}

/** A route template such as `/registry-server/api/schemas/{vendor}/{name}` or `/files/{path+}`. */
function compile(template: string): string[] {
  return template.split('/').filter((s) => s.length > 0)
}

function match(segments: string[], parts: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {}
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!
    if (seg.startsWith('{') && seg.endsWith('+}')) {
      if (i >= parts.length) return undefined
      params[seg.slice(1, -2)] = parts.slice(i).map(decode).join('/')
      return params
    }
    const part = parts[i]
    if (part === undefined) return undefined
    if (seg.startsWith('{') && seg.endsWith('}')) params[seg.slice(1, -1)] = decode(part)
    else if (seg !== part) return undefined
  }
  return parts.length === segments.length ? params : undefined
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/**
 * A small path router for one function's routes. Literal segments win over
 * parameters because routes are tried in order of specificity.
 */
export class Router {
  private readonly routes: Route[] = []
  private notFound: HttpHandler = (req) =>
    json(404, { message: `No route for ${req.method} ${req.path}` })

  on(method: string, template: string, handler: HttpHandler): this {
    this.routes.push({ method: method.toUpperCase(), segments: compile(template), handler })
    this.routes.sort((a, b) => specificity(b.segments) - specificity(a.segments))
    return this
  }
  get(t: string, h: HttpHandler) { return this.on('GET', t, h) }
  post(t: string, h: HttpHandler) { return this.on('POST', t, h) }
  put(t: string, h: HttpHandler) { return this.on('PUT', t, h) }
  delete(t: string, h: HttpHandler) { return this.on('DELETE', t, h) }
  any(t: string, h: HttpHandler) { return this.on('ANY', t, h) }
  fallback(h: HttpHandler): this {
    this.notFound = h
    return this
  }

  /** Dispatches a request; answers 405 when the path matches under another method. */
  async handle(req: HttpRequest): Promise<HttpResponse> {
    const parts = req.path.split('/').filter((s) => s.length > 0)
    const allowed = new Set<string>()
    for (const route of this.routes) {
      const params = match(route.segments, parts)
      if (!params) continue
      if (route.method !== 'ANY' && route.method !== req.method && !(route.method === 'GET' && req.method === 'HEAD')) {
        allowed.add(route.method)
        continue
      }
      return route.handler({ ...req, params: { ...req.params, ...params } })
    }
    if (allowed.size > 0) {
      return json(405, { message: `Method ${req.method} not allowed on ${req.path}` }, { allow: [...allowed].join(', ') })
    }
    return this.notFound(req)
  }
}

function specificity(segments: string[]): number {
  // More literal segments first, then more segments, greedy last.
  let score = 0
  for (const s of segments) score += s.startsWith('{') ? (s.endsWith('+}') ? 0 : 1) : 3
  return score * 100 + segments.length
}
