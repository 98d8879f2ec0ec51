/** The shapes every adapter shares: the raw events it yields and the failures it reports. */
import type { ClientError, IgluParseCode } from '../iglu'
import type { Raw } from '../json'
import type { LoadedPayload } from '../payload'
import type { Resolver } from '../../iglu/resolver'

export type Params = Map<string, string | null>

/** One event as the tracker (or webhook) described it, with the request's context. */
export interface RawEvent {
  readonly payload: LoadedPayload
  readonly parameters: Params
  /** The parameters as the tracker sent them, when they are all strings from one JSON object (same order as `parameters`). */
  readonly fields?: Readonly<Record<string, string>>
  /** No parameter value holds a control character (so each is TSV-safe as it is). */
  readonly controlFree?: boolean
  /** Every parameter value is ASCII text. */
  readonly ascii?: boolean
}

export type AdapterMessage =
  | { readonly field: string; readonly value: string | null; readonly expectation: string }
  | { readonly field: string; readonly value: string | null; readonly error: string }
  | { readonly json: Raw; readonly error: IgluParseCode }
  | { readonly schemaKey: string; readonly error: ClientError }
  | { readonly schemaKey: string; readonly schemaCriterion: string }
  | { readonly actual: string | null; readonly expectedMapping: Readonly<Record<string, string>>; readonly expectation: string }

export type AdapterResult =
  | { ok: true; events: RawEvent[] }
  | { ok: false; badRow: 'adapter_failures' | 'tracker_protocol_violations'; messages: AdapterMessage[] }

export interface AdapterContext {
  readonly resolver: Resolver
  readonly maxJsonDepth: number
  /** When cached schemas are judged fresh at (epoch ms, the resolver's clock); default: now. */
  readonly now?: number
  /** Configured replacements of the webhook adapters' default schemas (default URI → URI). */
  readonly schemaOverrides?: ReadonlyMap<string, string>
  /** Adapters served over HTTP, by `vendor/version`. */
  readonly remoteAdapters?: ReadonlyMap<string, (p: LoadedPayload, ctx: AdapterContext) => AdapterResult | Promise<AdapterResult>>
}
