/**
 * The data-structures read view of this deployment's schema registry. A data
 * structure is identified per organization by
 * `sha256_hex("{organizationId}-{vendor}-{name}-{format}")`.
 */
import { createHash } from 'node:crypto'
import { compareSchemaVer, formatSchemaVer } from '../iglu/keys'
import { canonicalSchema } from '../iglu/selfdesc'
import type { StoredSchema } from '../iglu/store'

export function dataStructureHash(orgId: string, vendor: string, name: string, format: string): string {
  return createHash('sha256').update(`${orgId}-${vendor}-${name}-${format}`, 'utf8').digest('hex')
}

export const ENVS = ['DEV', 'PROD'] as const

export interface Deployment {
  readonly version: string
  readonly env: (typeof ENVS)[number]
  readonly patchLevel: number
  readonly contentHash: string
  readonly ts: string
}

export interface DataStructure {
  readonly hash: string
  readonly organizationId: string
  readonly vendor: string
  readonly name: string
  readonly format: string
  readonly meta: { readonly hidden: boolean; readonly schemaType: string | null; readonly customData: Record<string, string> }
  readonly deployments: readonly Deployment[]
  /** Every version, oldest first (not part of the wire format). */
  readonly versions: readonly StoredSchema[]
}

export function contentHash(s: StoredSchema): string {
  return createHash('sha256').update(JSON.stringify(s.body), 'utf8').digest('hex')
}

/** Groups registry schemas into data structures, with every version deployed to both environments, newest first. */
export function dataStructures(orgId: string, schemas: readonly StoredSchema[]): DataStructure[] {
  const groups = new Map<string, StoredSchema[]>()
  for (const s of schemas) {
    const id = `${s.key.vendor}/${s.key.name}/${s.key.format}`
    const list = groups.get(id) ?? []
    list.push(s)
    groups.set(id, list)
  }
  return [...groups.values()].map((versions) => {
    versions.sort((a, b) => compareSchemaVer(a.key.version, b.key.version))
    const { vendor, name, format } = versions[0]!.key
    const deployments = [...versions].reverse().flatMap((v) =>
      ENVS.map((env) => ({ version: formatSchemaVer(v.key.version), env, patchLevel: 0, contentHash: contentHash(v), ts: v.updatedAt })),
    )
    return {
      hash: dataStructureHash(orgId, vendor, name, format),
      organizationId: orgId,
      vendor,
      name,
      format,
      meta: { hidden: false, schemaType: null, customData: {} },
      deployments,
      versions,
    }
  })
}

/** The wire form of a data structure (without the internal `versions`). */
export function wire(ds: DataStructure) {
  const { versions: _versions, ...rest } = ds
  return rest
}

/** The schema document of one version: `$schema`, `self`, then the body. */
export function schemaDocument(s: StoredSchema) {
  return canonicalSchema(s.key, s.body)
}
