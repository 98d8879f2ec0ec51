/**
 * The CloudFormation resource specification, as the AWS CDK's service spec
 * database (npm `@aws-cdk/aws-service-spec`) gives it — resources and type
 * definitions, each property with its type, whether it is required, and
 * its allowed values where the spec lists them — and the check of one
 * resource's properties against it.
 *
 * Values as CloudFormation takes them: a scalar where a string is expected,
 * a numeric string where a number is, `"true"`/`"false"` where a boolean is
 * (CloudFormation converts these). An intrinsic function (`Ref`,
 * `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::If`…) stands for a value of
 * whatever type is expected and is not checked further.
 */
import { intrinsicName, isNoValue } from './template'

export type SpecType =
  | { readonly type: 'string'; readonly allowedValues?: readonly string[] }
  | { readonly type: 'integer'; readonly allowedValues?: readonly number[] }
  | { readonly type: 'number' | 'boolean' | 'json' | 'date-time' | 'null' | 'tag' }
  | { readonly type: 'ref'; readonly reference: { readonly $ref: string } }
  | { readonly type: 'array' | 'map'; readonly element: SpecType }
  | { readonly type: 'union'; readonly types: readonly SpecType[] }

export interface SpecProperty {
  readonly type: SpecType
  readonly previousTypes?: readonly SpecType[]
  readonly required?: boolean
}

export interface SpecResource {
  readonly cloudFormationType: string
  readonly properties: Readonly<Record<string, SpecProperty>>
  readonly attributes?: Readonly<Record<string, unknown>>
}

export interface SpecTypeDefinition {
  readonly $id: string
  readonly name: string
  readonly properties: Readonly<Record<string, SpecProperty>>
}

/** The entities of the spec database that the checks read (its `schema.resource` and `schema.typeDefinition`). */
export interface SpecSource {
  readonly resources: readonly SpecResource[]
  readonly typeDefinitions: readonly SpecTypeDefinition[]
}

export interface Spec {
  readonly resources: ReadonlyMap<string, SpecResource>
  readonly types: ReadonlyMap<string, SpecTypeDefinition>
}

export function indexSpec(source: SpecSource): Spec {
  return {
    resources: new Map(source.resources.map((r) => [r.cloudFormationType, r])),
    types: new Map(source.typeDefinitions.map((t) => [t.$id, t])),
  }
}

/** The allowed values of a resource type's property, when the spec lists them. */
export function allowedValues(spec: Spec, type: string, property: string): readonly (string | number)[] | undefined {
  const t = spec.resources.get(type)?.properties[property]?.type
  return t && (t.type === 'string' || t.type === 'integer') ? t.allowedValues : undefined
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const isNumeric = (v: unknown) => (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)))

function describe(t: SpecType, spec: Spec): string {
  switch (t.type) {
    case 'ref': return `an object (${spec.types.get(t.reference.$ref)?.name ?? 'structure'})`
    case 'array': return 'a list'
    case 'map': return 'a map'
    case 'union': return t.types.map((x) => describe(x, spec)).join(' or ')
    case 'integer': return 'an integer'
    case 'json': return 'JSON'
    case 'tag': return 'a tag'
    case 'date-time': return 'a date-time string'
    default: return `a ${t.type}`
  }
}

const show = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v)
  return s.length > 60 ? `${s.slice(0, 57)}...` : s
}

/** Problems of `value` at `path` against `type` (empty when it fits). */
export function checkValue(value: unknown, type: SpecType, path: string, spec: Spec): string[] {
  if (intrinsicName(value) !== undefined) return []
  switch (type.type) {
    case 'string': {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return [`${path}: expected a string, got ${show(value)}`]
      if (type.allowedValues && type.allowedValues.length > 0 && !type.allowedValues.includes(String(value))) return [`${path}: ${show(value)} is not one of ${type.allowedValues.join(', ')}`]
      return []
    }
    case 'integer': {
      if (!isNumeric(value) || !Number.isInteger(Number(value))) return [`${path}: expected an integer, got ${show(value)}`]
      if (type.allowedValues && type.allowedValues.length > 0 && !type.allowedValues.includes(Number(value))) return [`${path}: ${show(value)} is not one of ${type.allowedValues.join(', ')}`]
      return []
    }
    case 'number':
      return isNumeric(value) ? [] : [`${path}: expected a number, got ${show(value)}`]
    case 'boolean':
      return typeof value === 'boolean' || (typeof value === 'string' && /^(true|false)$/i.test(value)) ? [] : [`${path}: expected a boolean, got ${show(value)}`]
    case 'date-time':
      return typeof value === 'string' ? [] : [`${path}: expected a date-time string, got ${show(value)}`]
    case 'json':
      return value === undefined ? [`${path}: expected JSON`] : []
    case 'null':
      return value === null ? [] : [`${path}: expected null, got ${show(value)}`]
    case 'tag': {
      if (!isObject(value)) return [`${path}: expected a tag {Key, Value}, got ${show(value)}`]
      const out: string[] = []
      for (const k of ['Key', 'Value']) if (!(k in value)) out.push(`${path}.${k}: missing required property`)
      for (const k of Object.keys(value)) if (k !== 'Key' && k !== 'Value') out.push(`${path}.${k}: unknown property`)
      return out
    }
    case 'array': {
      if (!Array.isArray(value)) return [`${path}: expected a list, got ${show(value)}`]
      return value.flatMap((v, i) => (isNoValue(v) ? [] : checkValue(v, type.element, `${path}[${i}]`, spec)))
    }
    case 'map': {
      if (!isObject(value)) return [`${path}: expected a map, got ${show(value)}`]
      return Object.entries(value).flatMap(([k, v]) => checkValue(v, type.element, `${path}.${k}`, spec))
    }
    case 'ref': {
      const def = spec.types.get(type.reference.$ref)
      if (!def) return []
      if (!isObject(value)) return [`${path}: expected ${describe(type, spec)}, got ${show(value)}`]
      return checkProperties(value, def.properties, path, spec)
    }
    case 'union': {
      // A list is checked against the union's list alternative, an object against its
      // structures and maps, when it has one: a `json` alternative stands for other shapes.
      const sameKind = type.types.filter((t) => (Array.isArray(value) ? t.type === 'array' : isObject(value) ? t.type === 'ref' || t.type === 'map' || t.type === 'tag' : false))
      let best: string[] | undefined
      for (const t of sameKind) {
        const p = checkValue(value, t, path, spec)
        if (p.length === 0) return []
        if (!best || p.length < best.length) best = p
      }
      if (best) return best
      for (const t of type.types) if (checkValue(value, t, path, spec).length === 0) return []
      return [`${path}: expected ${describe(type, spec)}, got ${show(value)}`]
    }
  }
}

/** A property fits when its value fits the current type or one of its previous ones. */
function checkProperty(value: unknown, prop: SpecProperty, path: string, spec: Spec): string[] {
  const first = checkValue(value, prop.type, path, spec)
  if (first.length === 0) return []
  for (const t of prop.previousTypes ?? []) if (checkValue(value, t, path, spec).length === 0) return []
  return first
}

/** The problems of an object's properties against their spec: unknown ones, missing required ones, values of the wrong type. */
export function checkProperties(value: Record<string, unknown>, properties: Readonly<Record<string, SpecProperty>>, path: string, spec: Spec): string[] {
  const out: string[] = []
  const at = (k: string) => (path === '' ? k : `${path}.${k}`)
  for (const [k, v] of Object.entries(value)) {
    const prop = properties[k]
    if (!prop) { out.push(`${at(k)}: unknown property`); continue }
    if (isNoValue(v)) continue
    out.push(...checkProperty(v, prop, at(k), spec))
  }
  for (const [k, prop] of Object.entries(properties)) {
    if (prop.required && (!(k in value) || isNoValue(value[k]))) out.push(`${at(k)}: missing required property`)
  }
  return out
}
