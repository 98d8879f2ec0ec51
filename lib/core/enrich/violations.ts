/** An event's violations: their shape, the failure entities they become and their `schema_violations` bad-row messages. */
import type { Processor } from './badrows'
import { ATOMIC_SCHEMA, FAILURE_SCHEMA, type Entity } from './event'
import { PARSE_CODE_MESSAGES, type ClientError, type DataReport, type IgluParseCode } from './iglu'
import { Raw, stringify } from './json'
import type { EnrichmentFailure } from './steps'
import { instant } from './time'
import type { AtomicError } from './transform'

/** Why an event failed: a problem with a self-describing input, a derived context or the atomic fields. */
export type Violation =
  | { kind: 'NotJson'; source: string; field: string; value: string; error: string }
  | { kind: 'NotIglu'; source: string; json: string; code: IgluParseCode }
  | { kind: 'CriterionMismatch'; source: string; schemaKey: string; criterion: string; data: string }
  | { kind: 'IgluError'; source: string; schemaKey: string; error: ClientError; data: string; reports?: readonly DataReport[]; schemaMessage?: string; resolution?: boolean }
  | { kind: 'Atomic'; errors: AtomicError[] }

/** No violations (shared, never added to). */
export const NO_VIOLATIONS: readonly Violation[] = []

function entity(p: Processor, at: number, failureType: string, errors: unknown[], schema: string | null, data: unknown): Entity {
  return {
    schema: FAILURE_SCHEMA,
    data: stringify({ failureType, errors, schema, data, timestamp: instant(at), componentName: p.artifact, componentVersion: p.version }),
  }
}

/** The failure entity (in `derived_contexts` of a failed event) of a violation. */
export function failureEntity(p: Processor, v: Violation, at: number): Entity {
  switch (v.kind) {
    case 'NotJson':
      return entity(p, at, 'NotJSON', [{ message: v.error, source: v.source }], null, { [v.source]: v.value })
    case 'NotIglu':
      return entity(p, at, 'NotIglu', [{ message: PARSE_CODE_MESSAGES[v.code], source: v.source }], null, new Raw(v.json))
    case 'CriterionMismatch':
      return entity(p, at, 'CriterionMismatch', [{ message: `Unexpected schema: ${v.schemaKey} does not match the criterion`, source: v.source, criterion: v.criterion }], v.schemaKey, new Raw(v.data))
    case 'IgluError': {
      if (v.resolution && v.error.error === 'ResolutionError') {
        return entity(p, at, 'ResolutionError', [{ message: `Resolution error: schema ${v.schemaKey} not found`, source: v.source, lookupHistory: v.error.lookupHistory }], v.schemaKey, new Raw(v.data))
      }
      const errors = v.reports
        ? v.reports.map((r) => ({ message: r.message, source: v.source, path: r.path, keyword: r.keyword, targets: r.targets }))
        : [{ message: v.schemaMessage ?? 'Invalid schema', source: v.source, path: '$' }]
      return entity(p, at, 'ValidationError', errors, v.schemaKey, new Raw(v.data))
    }
    case 'Atomic': {
      const data: Record<string, string | null> = {}
      for (const e of v.errors) data[e.field] = e.value
      return entity(
        p,
        at,
        'ValidationError',
        v.errors.map((e) => ({ message: e.message, source: 'atomic_field', path: e.field, keyword: e.keyword, targets: [] })),
        ATOMIC_SCHEMA,
        data,
      )
    }
  }
}

/** The failure entity of an enrichment failure. */
export function enrichmentFailureEntity(p: Processor, x: EnrichmentFailure, at: number): Entity {
  const type = `EnrichmentError: ${x.enrichment?.identifier ?? ''}`
  const schema = x.enrichment?.schemaKey ?? null
  if ('error' in x.message) return entity(p, at, type, [{ message: x.message.error }], schema, null)
  const m = x.message
  return entity(p, at, type, [{ message: `${m.field} - ${m.expectation}`, source: m.field }], schema, { [m.field]: m.value })
}

/** The `schema_violations` message of a violation. */
export function violationMessage(v: Violation): unknown {
  switch (v.kind) {
    case 'NotJson':
      return { field: v.field, value: v.value, error: v.error }
    case 'NotIglu':
      return { json: new Raw(v.json), error: v.code }
    case 'CriterionMismatch':
      return { schemaKey: v.schemaKey, schemaCriterion: v.criterion }
    case 'IgluError':
      return { schemaKey: v.schemaKey, error: v.error }
    case 'Atomic':
      return {
        schemaKey: ATOMIC_SCHEMA,
        error: { error: 'ValidationError', dataReports: v.errors.map((e) => ({ message: e.message, path: e.field, keyword: e.keyword, targets: [] })) },
      }
  }
}
