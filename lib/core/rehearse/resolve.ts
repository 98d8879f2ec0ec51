/**
 * Resolves the intrinsic functions of a cloud assembly's templates to local
 * values, as CloudFormation would at deploy time: `Ref`, `Fn::GetAtt`,
 * `Fn::Join`, `Fn::Sub`, `Fn::Select`, `Fn::Split`, `Fn::ImportValue`
 * (across the assembly's stacks, through their exports), `Fn::If` with the
 * template's conditions, `Fn::FindInMap`, `Fn::GetAZs`, `Fn::Base64` and the
 * pseudo parameters. Resources get the physical identities of physical.ts
 * unless the caller maps a logical ID to its own (a local endpoint's name).
 */
import { generatedName, LOCAL_ACCOUNT, nameProperty, physicalOf, type Physical, type Place } from './physical'
import { intrinsicName, type AssemblyStack, type Template } from './template'

export type Resolution = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string }

export interface ResolverOptions {
  readonly account?: string
  /** Region of stacks that do not fix one (default us-east-1). */
  readonly region?: string
  readonly partition?: string
  readonly urlSuffix?: string
  /** Physical identities the caller gives, by stack then logical ID; merged over the derived ones. */
  readonly physical?: Readonly<Record<string, Readonly<Record<string, Partial<Physical>>>>>
  /** Parameter values by stack (else each parameter's Default). */
  readonly parameters?: Readonly<Record<string, Readonly<Record<string, string>>>>
}

export interface AssemblyResolver {
  /** `value` of stack `stack` with every intrinsic resolved, or why it cannot be. */
  resolve(stack: string, value: unknown): Resolution
  /** What `Ref` and `Fn::GetAtt` give for a resource; undefined when the stack has no such resource. */
  physical(stack: string, logicalId: string): Physical | undefined
  /** The value of an export of the assembly, or undefined. */
  exportValue(name: string): string | undefined
  /** Where a stack lives. */
  place(stack: string): Place
}

class Unresolvable extends Error {}

/** Marks a property or element removed by `AWS::NoValue`. */
const NO_VALUE = Symbol('AWS::NoValue')

export function assemblyResolver(stacks: readonly AssemblyStack[], o: ResolverOptions = {}): AssemblyResolver {
  const byName = new Map(stacks.map((s) => [s.name, s]))
  const physicalCache = new Map<string, Physical>()
  const pending = new Set<string>()
  const exportCache = new Map<string, string>()

  const place = (stack: string): Place => ({
    partition: o.partition ?? 'aws',
    region: byName.get(stack)?.region ?? o.region ?? 'us-east-1',
    account: o.account ?? LOCAL_ACCOUNT,
    urlSuffix: o.urlSuffix ?? 'amazonaws.com',
  })

  function stackOf(name: string): AssemblyStack {
    const s = byName.get(name)
    if (!s) throw new Unresolvable(`no stack ${name}`)
    return s
  }

  function physical(stack: string, logicalId: string): Physical {
    const key = `${stack}\0${logicalId}`
    const cached = physicalCache.get(key)
    if (cached) return cached
    const resource = stackOf(stack).template.Resources?.[logicalId]
    if (!resource) throw new Unresolvable(`${stack} has no resource ${logicalId}`)
    if (pending.has(key)) throw new Unresolvable(`the name of ${logicalId} refers to itself`)
    pending.add(key)
    try {
      const prop = nameProperty(resource.Type)
      const given = prop === undefined ? undefined : resource.Properties?.[prop]
      let name = generatedName(stack, logicalId, resource.Type)
      if (given !== undefined) {
        const v = walk(stack, given)
        if (typeof v === 'string') name = v
      }
      let derived = physicalOf(resource.Type, name, place(stack), resource)
      // A secret's attachment to a database answers `Ref` with the secret's ARN (what a function is given to read it)
      if (resource.Type === 'AWS::SecretsManager::SecretTargetAttachment' && resource.Properties?.SecretId !== undefined) {
        const secret = walk(stack, resource.Properties.SecretId)
        if (typeof secret === 'string') derived = { ref: secret, attributes: {} }
      }
      const over = o.physical?.[stack]?.[logicalId]
      const p: Physical = { ref: over?.ref ?? derived.ref, attributes: { ...derived.attributes, ...over?.attributes } }
      physicalCache.set(key, p)
      return p
    } finally {
      pending.delete(key)
    }
  }

  function exportValue(name: string): string {
    const cached = exportCache.get(name)
    if (cached !== undefined) return cached
    const key = `export\0${name}`
    if (pending.has(key)) throw new Unresolvable(`the export ${name} refers to itself`)
    pending.add(key)
    try {
      for (const s of stacks) {
        for (const out of Object.values(s.template.Outputs ?? {})) {
          if (out.Export === undefined) continue
          let exported: unknown
          try { exported = walk(s.name, out.Export.Name) } catch (e) { if (e instanceof Unresolvable) continue; throw e }
          if (exported !== name) continue
          const v = walk(s.name, out.Value)
          const text = typeof v === 'string' ? v : Array.isArray(v) ? v.join(',') : String(v)
          exportCache.set(name, text)
          return text
        }
      }
      throw new Unresolvable(`no stack exports ${name}`)
    } finally {
      pending.delete(key)
    }
  }

  function pseudo(stack: string, name: string): unknown {
    const p = place(stack)
    switch (name) {
      case 'AWS::AccountId': return p.account
      case 'AWS::Region': return p.region
      case 'AWS::Partition': return p.partition
      case 'AWS::URLSuffix': return p.urlSuffix
      case 'AWS::StackName': return stack
      case 'AWS::StackId': return `arn:${p.partition}:cloudformation:${p.region}:${p.account}:stack/${stack}/00000000-0000-0000-0000-000000000000`
      case 'AWS::NotificationARNs': return []
      case 'AWS::NoValue': return NO_VALUE
      default: return undefined
    }
  }

  function ref(stack: string, name: string): unknown {
    const p = pseudo(stack, name)
    if (p !== undefined) return p
    const t = stackOf(stack).template
    if (t.Parameters?.[name] !== undefined) {
      const given = o.parameters?.[stack]?.[name] ?? t.Parameters[name]!.Default
      if (given === undefined) throw new Unresolvable(`parameter ${name} has no value`)
      return given
    }
    return physical(stack, name).ref
  }

  function getAtt(stack: string, id: string, attr: string): string {
    const p = physical(stack, id)
    const v = p.attributes[attr]
    if (v === undefined) throw new Unresolvable(`${id} has no attribute ${attr} here`)
    return v
  }

  function condition(stack: string, name: string, seen: ReadonlySet<string> = new Set()): boolean {
    const c = stackOf(stack).template.Conditions?.[name]
    if (c === undefined) throw new Unresolvable(`no condition ${name}`)
    if (seen.has(name)) throw new Unresolvable(`condition ${name} refers to itself`)
    return truth(stack, c, new Set([...seen, name]))
  }

  function truth(stack: string, expr: unknown, seen: ReadonlySet<string>): boolean {
    if (typeof expr === 'boolean') return expr
    if (expr !== null && typeof expr === 'object' && !Array.isArray(expr) && Object.keys(expr).length === 1 && 'Condition' in expr) {
      return condition(stack, String((expr as { Condition: unknown }).Condition), seen)
    }
    const fn = intrinsicName(expr)
    const arg = fn === undefined ? undefined : (expr as Record<string, unknown>)[fn]
    switch (fn) {
      case 'Fn::Equals': {
        const [a, b] = arg as [unknown, unknown]
        return JSON.stringify(walk(stack, a)) === JSON.stringify(walk(stack, b))
      }
      case 'Fn::And': return (arg as unknown[]).every((x) => truth(stack, x, seen))
      case 'Fn::Or': return (arg as unknown[]).some((x) => truth(stack, x, seen))
      case 'Fn::Not': return !truth(stack, (arg as unknown[])[0], seen)
      case 'Fn::Contains': {
        const [list, item] = arg as [unknown, unknown]
        const items = walk(stack, list)
        return Array.isArray(items) && items.some((x) => JSON.stringify(x) === JSON.stringify(walk(stack, item)))
      }
      default: throw new Unresolvable(`not a condition: ${JSON.stringify(expr)}`)
    }
  }

  function sub(stack: string, text: string, vars: Record<string, unknown>): string {
    return text.replace(/\$\{([^}]*)\}/g, (_, inner: string) => {
      if (inner.startsWith('!')) return `\${${inner.slice(1)}}`
      const name = inner.trim()
      if (name in vars) return String(walk(stack, vars[name]))
      const dot = name.indexOf('.')
      if (dot > 0 && !name.startsWith('AWS::')) return getAtt(stack, name.slice(0, dot), name.slice(dot + 1))
      return String(ref(stack, name))
    })
  }

  function walk(stack: string, value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => walk(stack, v)).filter((v) => v !== NO_VALUE)
    if (value === null || typeof value !== 'object') return value
    const fn = intrinsicName(value)
    if (fn === undefined) {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) {
        const r = walk(stack, v)
        if (r !== NO_VALUE) out[k] = r
      }
      return out
    }
    const arg = (value as Record<string, unknown>)[fn]
    switch (fn) {
      case 'Ref': return ref(stack, String(arg))
      case 'Fn::GetAtt': {
        const [id, attr] = Array.isArray(arg) ? [String(arg[0]), String(walk(stack, arg[1]))] : (() => { const s = String(arg); const i = s.indexOf('.'); return [s.slice(0, i), s.slice(i + 1)] })()
        return getAtt(stack, id, attr)
      }
      case 'Fn::Join': {
        const [delim, list] = arg as [string, unknown]
        const items = walk(stack, list)
        if (!Array.isArray(items)) throw new Unresolvable('Fn::Join of a non-list')
        return items.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(delim)
      }
      case 'Fn::Sub': {
        if (typeof arg === 'string') return sub(stack, arg, {})
        const [text, vars] = arg as [string, Record<string, unknown>]
        return sub(stack, text, vars ?? {})
      }
      case 'Fn::Select': {
        const [index, list] = arg as [unknown, unknown]
        const items = walk(stack, list)
        const i = Number(walk(stack, index))
        if (!Array.isArray(items) || !Number.isInteger(i) || i < 0 || i >= items.length) throw new Unresolvable(`Fn::Select ${i} out of the list`)
        return items[i]
      }
      case 'Fn::Split': {
        const [delim, text] = arg as [string, unknown]
        const s = walk(stack, text)
        if (typeof s !== 'string') throw new Unresolvable('Fn::Split of a non-string')
        return s.split(delim)
      }
      case 'Fn::ImportValue': return exportValue(String(walk(stack, arg)))
      case 'Fn::If': {
        const [cond, yes, no] = arg as [string, unknown, unknown]
        return walk(stack, condition(stack, cond) ? yes : no)
      }
      case 'Fn::FindInMap': {
        const [m, k1, k2] = (arg as unknown[]).map((x) => String(walk(stack, x)))
        const v = stackOf(stack).template.Mappings?.[m!]?.[k1!]?.[k2!]
        if (v === undefined) throw new Unresolvable(`no mapping ${m}.${k1}.${k2}`)
        return v
      }
      case 'Fn::GetAZs': {
        const r = place(stack).region
        return [`${r}a`, `${r}b`, `${r}c`]
      }
      case 'Fn::Base64': return Buffer.from(String(walk(stack, arg)), 'utf8').toString('base64')
      case 'Fn::Equals':
      case 'Fn::And':
      case 'Fn::Or':
      case 'Fn::Not':
      case 'Fn::Contains': return truth(stack, value, new Set())
      default: throw new Unresolvable(`${fn} is not resolved here`)
    }
  }

  const guard = <T>(f: () => T): T | undefined => {
    try { return f() } catch (e) { if (e instanceof Unresolvable) return undefined; throw e }
  }

  return {
    resolve(stack, value) {
      try {
        const v = walk(stack, value)
        return { ok: true, value: v === NO_VALUE ? undefined : v }
      } catch (e) {
        if (e instanceof Unresolvable) return { ok: false, problem: e.message }
        throw e
      }
    },
    physical: (stack, logicalId) => guard(() => physical(stack, logicalId)),
    exportValue: (name) => guard(() => exportValue(name)),
    place,
  }
}

/** A resolver for one template alone (a stack named `stack`). */
export function templateResolver(template: Template, stack = 'Stack', o: ResolverOptions = {}): AssemblyResolver {
  return assemblyResolver([{ name: stack, template }], o)
}
