/**
 * Adapters: one collector payload → raw events (tracker-protocol parameter
 * maps) or the failures that become bad rows. The tracker protocol, redirects
 * and the Iglu webhook are in `tracker.ts`, the vendors' webhooks one file each
 * (listed in `webhooks.ts`), the configured remote adapters in `remote.ts`.
 */
export type { AdapterContext, AdapterMessage, AdapterResult, Params, RawEvent } from './types'
export { adapt, adaptPayload, PAYLOAD_DATA_CRITERION } from './tracker'
export { WEBHOOKS } from './webhooks'
