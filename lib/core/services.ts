/**
 * The services of the single-instance stack, as the control plane names them
 * (`service_name`); Snowplow Mini's names for the same services are aliases.
 * Which functions serve each is declared with the functions (`services`).
 * This module has no imports, so any function can read it cheaply.
 */
export const serviceNames = ['collector', 'enrich', 'esLoaderGood', 'esLoaderBad', 'registry', 'dashboard', 'searchstore'] as const
export type ServiceName = (typeof serviceNames)[number]
export const serviceAliases: Readonly<Record<string, ServiceName>> = { iglu: 'registry', kibana: 'dashboard', elasticsearch: 'searchstore' }
