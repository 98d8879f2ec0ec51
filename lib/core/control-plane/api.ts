/**
 * The control plane under `/control-plane`: Snowplow Mini's endpoints, form
 * parameters, answers and errors (plain text), for functions instead of
 * containers. The effects go through ports; this module holds the rules.
 */
import { isUuidV4 } from '../iglu/apikeys'
import { domainProblem } from '../https/rules'
import { byPublication, metaRepresentation } from '../iglu/service'
import type { StoredSchema } from '../iglu/store'
import { passwordProblem, usernameProblem } from '../auth/basic'
import { serviceAliases, serviceNames, type ServiceName } from '../services'
import type { HttpHandler, HttpRequest, HttpResponse } from '../../http/types'
import { json, text } from '../../http/types'
import { parseQuery } from '../../http/apigateway'
import { enrichmentItem, listEnrichments, uploadEnrichment, type EnrichmentDeps } from './enrichments'
import { externalRegistryFromForm, type ExternalRegistry } from './registries'

export interface ControlPlaneDeps extends Omit<EnrichmentDeps, 'restart'> {
  readonly version: string
  /** Restarts the services; resolves once the restart is guaranteed (see `lib/runtime/restarts.ts`). */
  restart(services: readonly ServiceName[]): Promise<void>
  /** Empties both indices of the search store; undefined when the deployment has none. */
  readonly resetSearchStore?: () => Promise<void>
  /**
   * Replaces the credentials of the pages (the rules are checked before) when
   * `currentPassword` is the password they replace: `false`, and nothing
   * changed, when it is not.
   */
  changeCredentials(currentPassword: string, username: string, password: string): Promise<boolean>
  /** Replaces the registry's super API key (a UUID v4, checked before). */
  setSuperApiKey(key: string): Promise<void>
  listExternalRegistries(): Promise<readonly ExternalRegistry[]>
  putExternalRegistry(r: ExternalRegistry): Promise<void>
  /** Removes the registry of that name; false when there is none. */
  deleteExternalRegistry(name: string): Promise<boolean>
  /** Why the URL cannot be reached, or undefined when it answered. */
  probe(uri: string): Promise<string | undefined>
  telemetryDisabled(): Promise<boolean>
  setTelemetryDisabled(disable: boolean): Promise<void>
  /**
   * Serves the deployment at `domain` (checked to be a domain name before), or
   * says what it takes: the status and the sentence of the answer.
   */
  submitDomain(domain: string): Promise<{ readonly status: number; readonly message: string }>
  /** The state of HTTPS (domain, certificate, progress, last failure), as JSON. */
  domainState(): Promise<unknown>
  now(): Date
  /** Whether, and by whom, the licence enrich runs under is accepted. */
  licence(): Promise<LicenceState>
  /** Records the licence's acceptance by `by` at `at`; gives what follows from it (a sentence). */
  acceptLicence(by: string, at: Date): Promise<string>
  /** The tracking plans' API (`…/tracking-plans/…`, see `../tracking-plans/api.ts`), where the deployment serves it. */
  readonly trackingPlans?: HttpHandler
  /** Every schema of the deployment's registry, public and private (read from its store, not through an API key). */
  listSchemas(): Promise<readonly StoredSchema[]>
}

export interface LicenceState {
  readonly accepted: boolean
  /** `environment`, `configuration`, or the user who accepted it on the control plane. */
  readonly by?: string
  /** With `by: environment`: the variable that accepted it (`ACCEPT_LIMITED_USE_LICENSE`). */
  readonly variable?: string
  readonly at?: string
  readonly licence: { readonly name: string; readonly url: string }
}

/** The `accept` field of the licence form: undefined when it says yes, else why not. */
export function licenceFormProblem(form: Readonly<Record<string, string>>): string | undefined {
  const v = form.accept
  if (v === undefined) return 'missing parameter accept: send accept=yes to accept the licence'
  if (v.trim().toLowerCase() !== 'yes') return `accept must be yes to accept the licence (got '${v.slice(0, 20)}'): nothing was recorded`
  return undefined
}

export const FORM_LIMIT_BYTES = 64 * 1024

/** Mini's control plane answers. */
export const ANSWERS = {
  ok: 'OK',
  reset: 'The search store is reset: both indices (good and bad) are empty.',
  uploaded: 'uploaded successfully',
  added: 'added successfully',
  changed: 'changed successfully',
} as const

const bad = (message: string, status = 400) => text(status, `${message}\n`)

/** The form of a request: the query string, overridden by an urlencoded body (Go's `FormValue`). */
type Form = { readonly form: Readonly<Record<string, string>>; readonly error?: undefined } | { readonly error: HttpResponse }

function formOf(req: HttpRequest): Form {
  const form: Record<string, string> = { ...req.query }
  if (req.body.length === 0) return { form }
  const type = (req.headers['content-type'] ?? '').toLowerCase()
  if (req.body.length > FORM_LIMIT_BYTES) return { error: bad(`the form is larger than ${FORM_LIMIT_BYTES} bytes`, 413) }
  if (type !== '' && !type.startsWith('application/x-www-form-urlencoded')) return { error: bad('send the parameters as application/x-www-form-urlencoded (or multipart/form-data for the enrichment file)', 415) }
  return { form: { ...form, ...parseQuery(req.body.toString('utf8')) } }
}

function serviceOf(value: string | undefined): ServiceName | undefined {
  if (value === undefined) return undefined
  const v = value.trim()
  return (serviceNames as readonly string[]).includes(v) ? (v as ServiceName) : serviceAliases[v]
}

const RECOGNIZED = `Recognized service names: ${serviceNames.join(', ')} (and ${Object.keys(serviceAliases).join(', ')} as aliases)`

export function controlPlaneApi(deps: ControlPlaneDeps, basePath = '/control-plane'): HttpHandler {
  const routes: Record<string, (req: HttpRequest) => Promise<HttpResponse> | HttpResponse> = {
    async 'restart-services'(req) {
      if (req.method !== 'PUT') return bad('Only PUT is supported', 404)
      await deps.restart(serviceNames)
      return text(200, ANSWERS.ok)
    },
    async 'restart-service'(req) {
      if (req.method !== 'PUT') return bad('Only PUT is supported', 404)
      const f = formOf(req)
      if (f.error) return f.error
      const form = f.form
      if (form.service_name === undefined) return bad('Missing key service_name')
      const service = serviceOf(form.service_name)
      if (!service) return bad(RECOGNIZED)
      await deps.restart([service])
      return text(200, ANSWERS.ok)
    },
    async 'reset-service'(req) {
      if (req.method !== 'POST') return bad('Only POST is supported')
      const f = formOf(req)
      if (f.error) return f.error
      const form = f.form
      if (form.service_name === undefined) return bad('Missing key service_name')
      if (serviceOf(form.service_name) !== 'searchstore') return bad(`${form.service_name} can't be reset. Only searchstore (or elasticsearch) can be reset.`)
      if (!deps.resetSearchStore) return bad('This deployment has no search store (it was deployed with -c searchStore=false).', 409)
      await deps.resetSearchStore()
      await deps.restart(['searchstore', 'dashboard'])
      return text(200, ANSWERS.reset)
    },
    async enrichments(req) {
      if (req.method === 'GET' || req.method === 'HEAD') return listEnrichments(deps)
      if (req.method !== 'POST') return bad('Only GET and POST are supported', 405)
      return uploadEnrichment(deps, req)
    },
    async 'external-iglu'(req) {
      if (req.method === 'GET') {
        return json(200, (await deps.listExternalRegistries()).map(publicRegistry))
      }
      if (req.method !== 'POST' && req.method !== 'PUT') return bad('Only GET, POST and PUT are supported', 405)
      const f = formOf(req)
      if (f.error) return f.error
      const form = f.form
      const r = externalRegistryFromForm(form, deps.now())
      if (!r.ok) return bad(r.message)
      const unreachable = await deps.probe(r.value.uri)
      if (unreachable !== undefined) return bad(`Given URL is not reachable: ${unreachable}`)
      await deps.putExternalRegistry(r.value)
      await deps.restart(['registry', 'enrich'])
      return text(200, ANSWERS.added)
    },
    async 'local-iglu-apikey'(req) {
      if (req.method !== 'POST') return bad('Only POST is supported', 405)
      const f = formOf(req)
      if (f.error) return f.error
      const form = f.form
      const key = form.local_iglu_apikey?.trim()
      if (!key) return bad('missing parameter local_iglu_apikey')
      if (!isUuidV4(key)) return bad('Given apikey is not valid UUID (a UUID v4 is required, e.g. the output of `uuidgen -r`)')
      await deps.setSuperApiKey(key.toLowerCase())
      await deps.restart(['registry'])
      return text(200, ANSWERS.added)
    },
    async credentials(req) {
      if (req.method !== 'POST') return bad('Only POST is supported', 405)
      const f = formOf(req)
      if (f.error) return f.error
      const form = f.form
      const username = form.new_username?.trim()
      const password = form.new_password
      const current = form.current_password
      if (!username) return bad('missing parameter new_username')
      if (!password) return bad('missing parameter new_password')
      if (!current) return bad('missing parameter current_password: the current password is required to change the credentials')
      const problem = usernameProblem(username) ?? passwordProblem(password)
      if (problem) return bad(problem)
      if (!(await deps.changeCredentials(current, username, password))) return bad('the current password is wrong: nothing was changed', 403)
      await deps.restart(['dashboard'])
      return text(200, ANSWERS.changed)
    },
    async 'domain-name'(req) {
      if (req.method === 'GET' || req.method === 'HEAD') return json(200, await deps.domainState())
      if (req.method !== 'POST') return bad('Only GET and POST are supported', 405)
      const f = formOf(req)
      if (f.error) return f.error
      const form = f.form
      if (form.domain_name === undefined || form.domain_name.trim() === '') return bad('missing parameter domain_name')
      const checked = domainProblem(form.domain_name)
      if (checked.problem !== undefined) return bad(checked.problem)
      const answer = await deps.submitDomain(checked.domain)
      return text(answer.status, `${answer.message}\n`)
    },
    async license(req) {
      if (req.method === 'GET' || req.method === 'HEAD') return json(200, await deps.licence())
      if (req.method !== 'POST') return bad('Only GET and POST are supported', 405)
      const f = formOf(req)
      if (f.error) return f.error
      const problem = licenceFormProblem(f.form)
      if (problem) return bad(problem)
      if (!req.user) return bad('the licence is accepted by a signed-in user: this request has no username', 403)
      return text(200, `licence accepted by ${req.user}: ${await deps.acceptLicence(req.user, deps.now())}\n`)
    },
    // The Registry tab of /home: the signed-in administrator sees every schema without handing an API key to the browser.
    async schemas(req) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return bad('Only GET is supported', 405)
      return json(200, [...(await deps.listSchemas())].sort(byPublication).map(metaRepresentation))
    },
    version(req) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return bad('Only GET is supported', 405)
      return text(200, deps.version)
    },
    async telemetry(req) {
      if (req.method === 'GET' || req.method === 'HEAD') return json(200, { 'collector.telemetry.disable': await deps.telemetryDisabled() })
      if (req.method !== 'PUT') return bad('Only GET and PUT are supported', 405)
      const f = formOf(req)
      if (f.error) return f.error
      const form = f.form
      if (form.disable === undefined) return bad('no key named disable')
      if (form.disable !== 'true' && form.disable !== 'false') return bad('set disable key to either true or false')
      await deps.setTelemetryDisabled(form.disable === 'true')
      await deps.restart(['collector'])
      return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '' }
    },
  }
  /** `external-iglu/{name}` (GET, DELETE) and `external-iglu/{name}/disable|enable` (POST). */
  const registryItem = async (req: HttpRequest, name: string, action: string | undefined): Promise<HttpResponse> => {
    if (action !== undefined && action !== 'disable' && action !== 'enable') return bad(`404 page not found: ${basePath}/external-iglu/{name} has GET, DELETE, and POST …/disable and …/enable`, 404)
    const allowed = action === undefined ? ['GET', 'HEAD', 'DELETE'] : ['POST']
    if (!allowed.includes(req.method)) return bad(`Only ${allowed.filter((m) => m !== 'HEAD').join(' and ')} ${allowed.length > 2 ? 'are' : 'is'} supported`, 405)
    const found = (await deps.listExternalRegistries()).find((r) => r.name === name)
    if (!found) return bad(`no external registry named ${name}`, 404)
    if (req.method === 'GET' || req.method === 'HEAD') return json(200, publicRegistry(found))
    if (req.method === 'DELETE') {
      await deps.deleteExternalRegistry(name)
      await deps.restart(['registry', 'enrich'])
      return text(200, 'removed successfully')
    }
    const enabled = action === 'enable'
    if (enabled) {
      const unreachable = await deps.probe(found.uri)
      if (unreachable !== undefined) return bad(`Given URL is not reachable: ${unreachable}`)
    }
    await deps.putExternalRegistry({ ...found, enabled })
    await deps.restart(['registry', 'enrich'])
    return text(200, `${enabled ? 'enabled' : 'disabled'} successfully`)
  }
  /** `enrichments/{file}[/action]` and `external-iglu/{name}[/action]`, decoded; undefined for other paths. */
  const itemRoute = (req: HttpRequest, rest: string): Promise<HttpResponse> | undefined => {
    const [collection, ...encoded] = rest.split('/')
    if ((collection !== 'enrichments' && collection !== 'external-iglu') || encoded.length < 1 || encoded.length > 2) return undefined
    const segments = encoded.map(decodeSegment)
    if (segments.some((x) => x === undefined)) return Promise.resolve(bad('the path is not valid percent-encoded UTF-8, or a segment is longer than 255 characters'))
    const [item, action] = segments as [string, string | undefined]
    return collection === 'enrichments' ? enrichmentItem({ ...deps, restart: (s) => deps.restart(s) }, req, item, action) : registryItem(req, item, action)
  }
  return async (req) => {
    const rest = req.path.startsWith(`${basePath}/`) ? req.path.slice(basePath.length + 1).replace(/\/+$/, '') : undefined
    if (deps.trackingPlans && (rest === 'tracking-plans' || rest?.startsWith('tracking-plans/'))) return deps.trackingPlans(req)
    const route = rest === undefined ? undefined : Object.hasOwn(routes, rest) ? routes[rest] : undefined
    if (route) return route(req)
    const item = rest === undefined ? undefined : itemRoute(req, rest)
    if (item) return item
    return bad(`404 page not found: the control plane has ${[...Object.keys(routes).map((r) => `${basePath}/${r}`), `${basePath}/enrichments/{file}`, `${basePath}/external-iglu/{name}`].join(', ')}`, 404)
  }
}

/** A path segment decoded, or undefined when it cannot be (or is empty, or too long). */
function decodeSegment(s: string): string | undefined {
  if (s === '' || s.length > 3 * 255) return undefined
  try {
    const d = decodeURIComponent(s)
    return d.length > 255 ? undefined : d
  } catch {
    return undefined
  }
}

/** A registry as answered: its key only said to exist. */
function publicRegistry({ apikey, ...r }: ExternalRegistry) {
  return { ...r, enabled: r.enabled !== false, hasApiKey: apikey !== undefined }
}
