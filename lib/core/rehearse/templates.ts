/**
 * The checks of a cloud assembly's templates before a deploy: every
 * resource of every stack against the CloudFormation resource
 * specification (its type exists, its required properties are present, it
 * has no unknown property, its values have the right type and allowed
 * value), its references (references.ts), each function's handler file in
 * its bundle, the limits CloudFormation and the services enforce at deploy
 * time (limits.ts), and — given the IAM actions catalogue — that every
 * action its policies name exists (iam-actions.ts). Outcomes as data: one
 * violation per problem.
 */
import { checkActions, type ActionCatalogue } from './iam-actions'
import { checkLimits } from './limits'
import { checkReferences } from './references'
import { assemblyResolver, type AssemblyResolver, type ResolverOptions } from './resolve'
import { checkProperties, type Spec } from './spec'
import type { AssemblyStack, TemplateResource, Violation } from './template'

export type { Violation } from './template'

export interface CheckOptions {
  /** Unzipped size in bytes of each asset directory, by the path the resource's `aws:asset:path` metadata names. */
  readonly assetBytes?: Readonly<Record<string, number>>
  /**
   * Whether an asset directory (by its `aws:asset:path`) holds a file (a path
   * inside it); undefined when the directory is not in the assembly (an
   * assembly synthesized without bundling).
   */
  readonly assetFile?: (assetPath: string, file: string) => boolean | undefined
  /** The IAM actions of each service, to refuse an action that does not exist. */
  readonly actions?: ActionCatalogue
  /** How intrinsics resolve (account, region, local names); a resolver over the stacks is made from these. */
  readonly resolver?: ResolverOptions
}

/** Keys CloudFormation allows on a resource besides `Type` and `Properties`. */
const RESOURCE_KEYS = new Set(['Type', 'Properties', 'DependsOn', 'Metadata', 'Condition', 'DeletionPolicy', 'UpdateReplacePolicy', 'CreationPolicy', 'UpdatePolicy'])
const POLICIES = { DeletionPolicy: ['Delete', 'Retain', 'Snapshot', 'RetainExceptOnCreate'], UpdateReplacePolicy: ['Delete', 'Retain', 'Snapshot'] } as const

/** Resource types outside the spec that CloudFormation accepts. */
function isCustom(type: string): boolean {
  return type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource'
}

/** The problems of one resource against the spec. */
export function checkResource(id: string, resource: TemplateResource, spec: Spec): string[] {
  const out: string[] = []
  if (typeof resource?.Type !== 'string') return ['no Type']
  for (const k of Object.keys(resource)) if (!RESOURCE_KEYS.has(k)) out.push(`unknown resource attribute ${k}`)
  for (const k of ['DeletionPolicy', 'UpdateReplacePolicy'] as const) {
    const v = resource[k]
    const allowed: readonly string[] = POLICIES[k]
    if (v !== undefined && (typeof v !== 'string' || !allowed.includes(v))) out.push(`${k} ${JSON.stringify(v)} is not one of ${allowed.join(', ')}`)
  }
  if (!/^[A-Za-z0-9]{1,255}$/.test(id)) out.push('logical ID must be 1 to 255 letters and digits')
  const props = resource.Properties ?? {}
  if (resource.Type === 'AWS::CDK::Metadata') return out
  if (isCustom(resource.Type)) {
    if (!('ServiceToken' in props)) out.push('ServiceToken: missing required property')
    return out
  }
  const def = spec.resources.get(resource.Type)
  if (!def) return [...out, `unknown resource type ${resource.Type}`]
  if (props === null || typeof props !== 'object' || Array.isArray(props)) return [...out, 'Properties must be an object']
  return [...out, ...checkProperties(props, def.properties, '', spec)]
}

/** The files a handler setting can name, for a runtime whose handlers are files: `dir/index.handler` → `dir/index.js`, `.mjs` or `.cjs`. */
export function handlerFiles(runtime: string, handler: string): string[] | undefined {
  const dot = handler.lastIndexOf('.')
  if (dot <= 0) return undefined
  if (runtime.startsWith('nodejs')) return ['.js', '.mjs', '.cjs'].map((ext) => `${handler.slice(0, dot)}${ext}`)
  if (runtime.startsWith('python')) return [`${handler.slice(0, dot).replace(/\./g, '/')}.py`]
  return undefined
}

/** Each function's handler file is in its bundle (else every invocation fails to import it). */
export function checkHandlers(stacks: readonly AssemblyStack[], assetFile: NonNullable<CheckOptions['assetFile']>): Violation[] {
  const out: Violation[] = []
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      if (r.Type !== 'AWS::Lambda::Function') continue
      const path = r.Metadata?.['aws:asset:path']
      const { Runtime: runtime, Handler: handler } = r.Properties ?? {}
      if (typeof path !== 'string' || typeof runtime !== 'string' || typeof handler !== 'string') continue
      const files = handlerFiles(runtime, handler)
      if (!files) {
        if (runtime.startsWith('nodejs') || runtime.startsWith('python')) out.push({ stack: s.name, resource: id, problem: `Handler ${JSON.stringify(handler)} is not file.function` })
        continue
      }
      const found = files.map((f) => assetFile(path, f))
      if (found.every((x) => x === false)) out.push({ stack: s.name, resource: id, problem: `Handler ${handler}: the bundle ${path} has no ${files.join(', ')}` })
    }
  }
  return out
}

/** Every violation of the assembly's stacks. */
export function checkAssembly(stacks: readonly AssemblyStack[], spec: Spec, o: CheckOptions = {}): Violation[] {
  const resolver: AssemblyResolver = assemblyResolver(stacks, o.resolver)
  const out: Violation[] = []
  for (const s of stacks) {
    for (const [id, r] of Object.entries(s.template.Resources ?? {})) {
      for (const problem of checkResource(id, r, spec)) out.push({ stack: s.name, resource: id, problem })
    }
  }
  out.push(...checkReferences(stacks, spec))
  out.push(...checkLimits(stacks, resolver, spec, o.assetBytes ?? {}))
  if (o.assetFile) out.push(...checkHandlers(stacks, o.assetFile))
  if (o.actions) out.push(...checkActions(stacks, o.actions))
  return out
}
