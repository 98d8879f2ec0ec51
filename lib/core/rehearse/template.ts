/**
 * The shape of a synthesized CloudFormation template, as far as the
 * rehearsal reads it, and the stacks of a cloud assembly.
 */

export interface TemplateResource {
  readonly Type: string
  readonly Properties?: Record<string, unknown>
  readonly Metadata?: Record<string, unknown>
  readonly Condition?: string
  readonly DependsOn?: string | string[]
  readonly DeletionPolicy?: string
  readonly UpdateReplacePolicy?: string
  readonly [other: string]: unknown
}

export interface TemplateOutput {
  readonly Value: unknown
  readonly Description?: string
  readonly Export?: { readonly Name: unknown }
  readonly Condition?: string
}

export interface Template {
  readonly Resources?: Record<string, TemplateResource>
  readonly Outputs?: Record<string, TemplateOutput>
  readonly Parameters?: Record<string, { readonly Type?: string; readonly Default?: unknown }>
  readonly Conditions?: Record<string, unknown>
  readonly Mappings?: Record<string, Record<string, Record<string, unknown>>>
  readonly [other: string]: unknown
}

/** One stack of a cloud assembly: its name (as deployed), its template, its region when the assembly fixes one. */
export interface AssemblyStack {
  readonly name: string
  readonly template: Template
  readonly region?: string
  /** Size in bytes of the template file as written (CloudFormation limits the body). */
  readonly templateBytes?: number
}

/** One problem found in a stack: `{stack, resource, problem}`. */
export interface Violation {
  readonly stack: string
  /** The resource's logical ID; `(template)` for the stack as a whole, `(output <name>)` for an output. */
  readonly resource: string
  readonly problem: string
}

/** `{ "Ref": … }`, `{ "Fn::…": … }` or `{ "Condition": … }` (inside condition expressions): one key, an intrinsic's name. */
export function intrinsicName(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const keys = Object.keys(value)
  if (keys.length !== 1) return undefined
  const k = keys[0]!
  return k === 'Ref' || k.startsWith('Fn::') ? k : undefined
}

/** Whether `value` is `{ "Ref": "AWS::NoValue" }`: the property is absent. */
export function isNoValue(value: unknown): boolean {
  return intrinsicName(value) === 'Ref' && (value as { Ref: unknown }).Ref === 'AWS::NoValue'
}

/** The resources of a template of the given type, by logical ID. */
export function resourcesOfType(template: Template, type: string): [string, TemplateResource][] {
  return Object.entries(template.Resources ?? {}).filter(([, r]) => r.Type === type)
}
