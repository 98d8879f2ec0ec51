/**
 * Who enrich is, in its outputs: `processor` of bad rows, `componentName` /
 * `componentVersion` of failure entities, and `v_etl` = `<artifact>-<version>`
 * (so `floe-enrich-0.1.0`).
 */
export const ENRICH_ARTIFACT = 'floe-enrich'
export const ENRICH_VERSION = '0.1.0'
export const ENRICH_PROCESSOR = { artifact: ENRICH_ARTIFACT, version: ENRICH_VERSION } as const
