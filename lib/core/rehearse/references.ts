/**
 * The references of a cloud assembly's templates, as CloudFormation checks
 * them before it creates anything: `Ref`, `Fn::GetAtt` and `Fn::Sub` name a
 * resource or parameter of the stack (and an attribute its type has),
 * `Fn::If` and `Condition` name a condition, `DependsOn` names resources,
 * `Fn::FindInMap` a mapping, `Fn::ImportValue` an export of some stack of the
 * assembly, no two stacks export the same name, and the resources of a
 * stack do not depend on each other in a circle.
 */
import type { Spec } from './spec'
import { intrinsicName, type AssemblyStack, type Template, type Violation } from './template'

const PSEUDO = new Set(['AWS::AccountId', 'AWS::NotificationARNs', 'AWS::NoValue', 'AWS::Partition', 'AWS::Region', 'AWS::StackId', 'AWS::StackName', 'AWS::URLSuffix'])

const isCustom = (type: string) => type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource'

interface Found {
  /** Resources this value refers to (for the dependency graph). */
  readonly targets: Set<string>
  readonly problems: string[]
}

/** The `${…}` names of a `Fn::Sub` string, `${!…}` literals left out. */
export function subNames(text: string): string[] {
  return [...text.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1]!).filter((n) => !n.startsWith('!')).map((n) => n.trim())
}

function walk(value: unknown, t: Template, spec: Spec, exports: ReadonlySet<string>, found: Found): void {
  if (Array.isArray(value)) { for (const v of value) walk(v, t, spec, exports, found); return }
  if (value === null || typeof value !== 'object') return
  const fn = intrinsicName(value)
  if (fn === undefined) { for (const v of Object.values(value)) walk(v, t, spec, exports, found); return }
  const arg = (value as Record<string, unknown>)[fn]
  const resources = t.Resources ?? {}
  const ref = (name: string, vars: ReadonlySet<string> = new Set()) => {
    if (PSEUDO.has(name) || vars.has(name) || t.Parameters?.[name] !== undefined) return
    if (resources[name] !== undefined) { found.targets.add(name); return }
    found.problems.push(`Ref to ${name}, which is neither a resource nor a parameter of the stack`)
  }
  const getAtt = (id: string, attr: string) => {
    const r = resources[id]
    if (!r) { found.problems.push(`Fn::GetAtt of ${id}, which is not a resource of the stack`); return }
    found.targets.add(id)
    if (isCustom(r.Type) || r.Type === 'AWS::CloudFormation::Stack') return
    const attrs = spec.resources.get(r.Type)?.attributes
    if (attrs && Object.keys(attrs).length > 0 && !(attr in attrs)) found.problems.push(`Fn::GetAtt ${id}.${attr}: ${r.Type} has no attribute ${attr}`)
  }
  switch (fn) {
    case 'Ref':
      if (typeof arg === 'string') ref(arg)
      return
    case 'Fn::GetAtt': {
      if (Array.isArray(arg) && typeof arg[0] === 'string') {
        if (typeof arg[1] === 'string') getAtt(arg[0], arg[1])
        else walk(arg[1], t, spec, exports, found)
      } else if (typeof arg === 'string' && arg.includes('.')) getAtt(arg.slice(0, arg.indexOf('.')), arg.slice(arg.indexOf('.') + 1))
      return
    }
    case 'Fn::Sub': {
      const [text, vars] = typeof arg === 'string' ? [arg, {}] : Array.isArray(arg) ? [arg[0], (arg[1] ?? {}) as Record<string, unknown>] : [undefined, {}]
      walk(vars, t, spec, exports, found)
      if (typeof text !== 'string') return
      const names = new Set(Object.keys(vars))
      for (const n of subNames(text)) {
        const dot = n.indexOf('.')
        if (dot > 0 && !names.has(n) && !PSEUDO.has(n)) getAtt(n.slice(0, dot), n.slice(dot + 1))
        else ref(n, names)
      }
      return
    }
    case 'Fn::If': {
      const [cond, ...rest] = Array.isArray(arg) ? arg : []
      if (typeof cond === 'string' && t.Conditions?.[cond] === undefined) found.problems.push(`Fn::If on ${cond}, which is not a condition of the stack`)
      walk(rest, t, spec, exports, found)
      return
    }
    case 'Fn::FindInMap': {
      const [map, ...rest] = Array.isArray(arg) ? arg : []
      if (typeof map === 'string' && t.Mappings?.[map] === undefined) found.problems.push(`Fn::FindInMap of ${map}, which is not a mapping of the stack`)
      walk(rest, t, spec, exports, found)
      return
    }
    case 'Fn::ImportValue':
      if (typeof arg === 'string') {
        if (!exports.has(arg)) found.problems.push(`Fn::ImportValue of ${arg}, which no stack of the assembly exports`)
      } else walk(arg, t, spec, exports, found)
      return
    default:
      walk(arg, t, spec, exports, found)
  }
}

/** A circle of resources that depend on each other, if the graph has one (as a path that returns to its start). */
export function dependencyCircle(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] | undefined {
  const state = new Map<string, 1 | 2>()
  const path: string[] = []
  const visit = (n: string): string[] | undefined => {
    state.set(n, 1)
    path.push(n)
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 1) return [...path.slice(path.indexOf(m)), m]
      if (state.get(m) === undefined) { const c = visit(m); if (c) return c }
    }
    path.pop()
    state.set(n, 2)
    return undefined
  }
  for (const n of graph.keys()) if (state.get(n) === undefined) { const c = visit(n); if (c) return c }
  return undefined
}

export function checkReferences(stacks: readonly AssemblyStack[], spec: Spec): Violation[] {
  const out: Violation[] = []
  // the exports of the assembly, literal names only (what CDK writes)
  const exporters = new Map<string, string[]>()
  for (const s of stacks) {
    for (const o of Object.values(s.template.Outputs ?? {})) {
      const name = o.Export?.Name
      if (typeof name === 'string') exporters.set(name, [...(exporters.get(name) ?? []), s.name])
    }
  }
  for (const [name, by] of exporters) if (by.length > 1) out.push({ stack: by[1]!, resource: '(template)', problem: `export ${name} is also exported by ${by[0]}` })
  const exports = new Set(exporters.keys())

  for (const s of stacks) {
    const t = s.template
    const graph = new Map<string, Set<string>>()
    for (const [id, r] of Object.entries(t.Resources ?? {})) {
      const found: Found = { targets: new Set(), problems: [] }
      walk(r.Properties ?? {}, t, spec, exports, found)
      for (const d of typeof r.DependsOn === 'string' ? [r.DependsOn] : Array.isArray(r.DependsOn) ? r.DependsOn : []) {
        if (t.Resources?.[d] === undefined) found.problems.push(`DependsOn ${d}, which is not a resource of the stack`)
        else found.targets.add(d)
      }
      if (typeof r.Condition === 'string' && t.Conditions?.[r.Condition] === undefined) found.problems.push(`Condition ${r.Condition}, which is not a condition of the stack`)
      graph.set(id, found.targets)
      for (const problem of found.problems) out.push({ stack: s.name, resource: id, problem })
    }
    for (const [name, o] of Object.entries(t.Outputs ?? {})) {
      const found: Found = { targets: new Set(), problems: [] }
      walk(o, t, spec, exports, found)
      for (const problem of found.problems) out.push({ stack: s.name, resource: `(output ${name})`, problem })
    }
    const circle = dependencyCircle(graph)
    if (circle) out.push({ stack: s.name, resource: circle[0]!, problem: `circular dependency: ${circle.join(' → ')}` })
  }
  return out
}
