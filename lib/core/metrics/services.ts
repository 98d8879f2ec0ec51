/**
 * Which function is which service, for metrics and logs.
 *
 * The services are the seed's `service_name` list (the control plane's names,
 * `serviceNames` in `lib/core/services.ts`). A function listed here is that
 * service; the search loader is two services, one per stream it loads (the
 * good events, the bad rows), as Snowplow Mini's two Elasticsearch loaders
 * were. Every other function is reported under its own key (`trackingDesign`,
 * `controlPlane`, `authorizer`, `archive`, `health`, `metrics`).
 *
 * A function's declared `services` are wider (enrich and the search API also
 * restart with the registry, whose schemas they cache); this mapping names
 * the one service each function's work belongs to. Keys are function keys of
 * `lib/infra/functions.ts` (a test checks each one is declared).
 */
import type { ServiceName } from '../services'

export interface ServiceShare {
  readonly service: ServiceName
  /** The streams whose stream-trigger invocations belong to this service (all when absent). */
  readonly streams?: readonly string[]
}

export const functionServices: Readonly<Record<string, readonly ServiceShare[]>> = {
  collector: [{ service: 'collector' }],
  enrich: [{ service: 'enrich' }],
  searchLoader: [
    { service: 'esLoaderGood', streams: ['good', 'incomplete', 'raw'] },
    { service: 'esLoaderBad', streams: ['bad'] },
  ],
  registry: [{ service: 'registry' }],
  ui: [{ service: 'dashboard' }],
  search: [{ service: 'searchstore' }],
}

/** The services of the mapping, in its order (the seed's order: collector, enrich, esLoaderGood, esLoaderBad, registry, dashboard, searchstore). */
export const mappedServices: readonly string[] = [...new Set(Object.values(functionServices).flatMap((shares) => shares!.map((s) => s.service)))]

/** The service names a function's figures are reported under: its mapped services, else its own key. */
export function servicesOf(fn: string): string[] {
  const shares = (functionServices as Record<string, readonly ServiceShare[] | undefined>)[fn]
  return shares ? shares.map((s) => s.service) : [fn]
}

/**
 * The service one invocation of `fn` belongs to: for a function of several
 * services, the one whose streams include the stream that triggered it (the
 * first when it was not a stream trigger).
 */
export function serviceOfInvocation(fn: string, stream?: string): string {
  const shares = (functionServices as Record<string, readonly ServiceShare[] | undefined>)[fn]
  if (!shares) return fn
  return (stream !== undefined ? shares.find((s) => s.streams?.includes(stream)) : undefined)?.service ?? shares[0]!.service
}

/** The functions that serve a service name (a function key names itself). */
export function functionsOfService(name: string, functionKeys: readonly string[]): string[] {
  const mapped = functionKeys.filter((fn) => servicesOf(fn).includes(name))
  return mapped.length > 0 ? mapped : functionKeys.filter((fn) => fn === name)
}

/** A function key in kebab case, as its log group and log file are named: `trackingDesign` → `tracking-design`. */
export function kebabName(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()
}
