/**
 * Floe's self-describing JSON Schema meta-schema
 * (`iglu:com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0`), written from
 * the documented rules: exact `$schema` URI, a complete `self` with the Iglu
 * part patterns, optional `$supersedes`/`$supersededBy` SchemaVers, and a body
 * that is a draft-04 JSON Schema. The same document is published as
 * `schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0`; a unit test
 * keeps both identical.
 */

export const META_SCHEMA_URI = 'http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#'
export const DRAFT4_URI = 'http://json-schema.org/draft-04/schema#'

const schemaVerPattern = '^[1-9][0-9]*-(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$'

export const selfDescribingMetaSchema = {
  $schema: META_SCHEMA_URI,
  description: 'Meta-schema for self-describing JSON Schemas: a draft-04 JSON Schema carrying its own Iglu identity in self',
  self: {
    vendor: 'com.snowplowanalytics.self-desc',
    name: 'schema',
    format: 'jsonschema',
    version: '1-0-0',
  },
  allOf: [
    {
      type: 'object',
      properties: {
        $schema: { type: 'string', enum: [META_SCHEMA_URI] },
        self: {
          type: 'object',
          properties: {
            vendor: { type: 'string', pattern: '^[a-zA-Z0-9-_.]+$' },
            name: { type: 'string', pattern: '^[a-zA-Z0-9-_]+$' },
            format: { type: 'string', pattern: '^[a-zA-Z0-9-_]+$' },
            version: { type: 'string', pattern: schemaVerPattern },
          },
          required: ['vendor', 'name', 'format', 'version'],
          additionalProperties: false,
        },
        $supersedes: { type: 'array', items: { type: 'string', pattern: schemaVerPattern } },
        $supersededBy: { type: 'string', pattern: schemaVerPattern },
      },
      required: ['$schema', 'self'],
    },
    { $ref: DRAFT4_URI },
  ],
} as const
