/**
 * The Aurora clusters the functions of an assembly reach through the RDS
 * Data API, read from their environment (the resolved connection
 * descriptors `{"kind":"rds-data","resourceArn","secretArn","database"}`
 * the stacks give them): what a Data API stand-in must answer for, with the
 * very ARNs the functions send.
 */
import type { FunctionInventory } from './inventory'

export interface DataApiTarget {
  readonly clusterArn: string
  readonly secretArn: string
  readonly database: string
  /** The functions (logical IDs) given this target. */
  readonly functions: readonly string[]
}

/** A Data API connection descriptor, if the value is one. */
function descriptor(value: string): { resourceArn: string; secretArn: string; database: string } | undefined {
  if (!value.startsWith('{') || !value.includes('rds-data')) return undefined
  try {
    const d = JSON.parse(value) as Record<string, unknown>
    if (d.kind !== 'rds-data' || typeof d.resourceArn !== 'string' || typeof d.secretArn !== 'string' || typeof d.database !== 'string') return undefined
    return { resourceArn: d.resourceArn, secretArn: d.secretArn, database: d.database }
  } catch {
    return undefined
  }
}

/** Every distinct cluster, secret and database the functions are given, with who is given it. */
export function dataApiTargets(functions: readonly FunctionInventory[]): DataApiTarget[] {
  const found = new Map<string, { clusterArn: string; secretArn: string; database: string; functions: string[] }>()
  for (const fn of functions) {
    for (const value of Object.values(fn.environment)) {
      const d = descriptor(value)
      if (!d) continue
      const key = `${d.resourceArn}\n${d.secretArn}\n${d.database}`
      const t = found.get(key) ?? { clusterArn: d.resourceArn, secretArn: d.secretArn, database: d.database, functions: [] }
      if (!t.functions.includes(fn.logicalId)) t.functions.push(fn.logicalId)
      found.set(key, t)
    }
  }
  return [...found.values()]
}
