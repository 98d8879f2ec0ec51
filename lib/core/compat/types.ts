/** Why a pair could not be decided: the keyword at fault, where (JSON pointer into A or B) and a short message. */
export interface UndecidableReason {
  readonly keyword: string
  readonly path: string
  readonly message: string
}

/**
 * Outcome of an inclusion check "every instance valid against A is valid against B".
 *
 * - `Compatible`: proved.
 * - `SchemaIncompatible`: `witness` is valid against A and invalid against B, confirmed with ajv-draft-04 and
 *   ajv-formats before it is returned.
 * - `SchemaUndecidable`: neither a proof nor a confirmed witness was found; `reasons` says where and why.
 */
export type CompatResult =
  | { readonly result: 'Compatible' }
  | { readonly result: 'SchemaIncompatible'; readonly witness: unknown; readonly reason?: string }
  | { readonly result: 'SchemaUndecidable'; readonly reasons: readonly UndecidableReason[] }

/** Options of {@link checkCompatibility}. */
export interface CompatOptions {
  /**
   * Looks up a schema by Iglu URI (`iglu:vendor/name/format/version`, without fragment), for `$ref`s that point
   * to `iglu:` URIs (and `http(s)://iglucentral.com/schemas/...` addresses, which are mapped to Iglu URIs).
   * Returns the schema (self-describing or bare) or `undefined` when unknown; an unknown reference makes the
   * affected part undecidable. Must be synchronous and deterministic. Pass the same function across calls:
   * compiled validators used to confirm witnesses are cached per resolver.
   */
  readonly resolve?: (igluUri: string) => object | undefined
  /** Work limit in abstract steps (default {@link DEFAULT_BUDGET}). Running out gives `SchemaUndecidable`. */
  readonly budget?: number
}

/** Default work limit: enough for every pair of Iglu Central by a wide margin, a few tens of ms at worst. */
export const DEFAULT_BUDGET = 200_000
