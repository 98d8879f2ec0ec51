/**
 * The names the pages (the event explorer's columns) show for values that
 * are not at a document path of that name, per index. Each is searchable by
 * that name, in the query-string syntax and the query DSL alike
 * (`app_id:shop` on the `bad` index is `data.payload.enriched.app_id:shop`):
 * the query translation (`./query-sql.ts`) looks field names up here first.
 * A name here is never a top-level key of the index's documents, so no
 * stored field is hidden by it. Any other field name is a document path.
 *
 * Plain data, no imports: the pages' columns (lib/ui/dashboard/columns.js)
 * take their labels from here.
 */

export type ShownField =
  /** The values at this document path (`deep`: every value at any depth under it). */
  | { readonly path: string; readonly deep?: true }
  /** A text the page computes from the document; `./query-sql.ts` computes the same in SQL. */
  | { readonly computed: ComputedField }

/**
 * - `event_schema`: `iglu:<event_vendor>/<event_name>/<event_format>/<event_version>` of a good event;
 * - `failure_type`: the name in a bad row's schema (`schema_violations`);
 * - `processor`: `<artifact> <version>` of the bad row's processor.
 */
export type ComputedField = 'event_schema' | 'failure_type' | 'processor'

export const SHOWN_FIELDS = {
  good: {
    schema: { computed: 'event_schema' },
  },
  bad: {
    failure_timestamp: { path: 'data.failure.timestamp' },
    failure_type: { computed: 'failure_type' },
    failing_schema: { path: 'data.failure.messages.schemaKey' },
    message: { path: 'data.failure', deep: true },
    app_id: { path: 'data.payload.enriched.app_id' },
    event: { path: 'data.payload.enriched.event' },
    event_name: { path: 'data.payload.enriched.event_name' },
    event_id: { path: 'data.payload.enriched.event_id' },
    processor: { computed: 'processor' },
  },
} as const satisfies Record<'good' | 'bad', Record<string, ShownField>>

/** The shown field of that name on the index, if it is one. */
export function shownField(index: 'good' | 'bad', name: string): ShownField | undefined {
  const fields: Readonly<Record<string, ShownField>> = SHOWN_FIELDS[index]
  return Object.prototype.hasOwnProperty.call(fields, name) ? fields[name] : undefined
}
