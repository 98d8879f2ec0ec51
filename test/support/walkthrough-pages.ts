/**
 * The pages whose shell blocks are walkthroughs or say why not: the README,
 * every page of docs/, and the component READMEs they link to.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { docBlocks, isShell, type DocBlock } from './walkthroughs'

export function walkthroughPages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)
  const linked = new Set<string>()
  for (const page of ['README.md', ...docs]) {
    for (const m of readFileSync(join(root, page), 'utf8').matchAll(/\]\((?:\.\.\/)?(lib\/[^)#]+\/README\.md)/g)) linked.add(m[1]!)
  }
  return ['README.md', ...docs, ...[...linked].sort()]
}

/** Every shell block of those pages. */
export function shellBlocks(root: string): DocBlock[] {
  return walkthroughPages(root).flatMap((p) => docBlocks(p, readFileSync(join(root, p), 'utf8'))).filter(isShell)
}

/** The walkthroughs, by name, in the order of the pages, with their blocks in order. */
export function walkthroughs(root: string): Map<string, DocBlock[]> {
  const out = new Map<string, DocBlock[]>()
  for (const b of shellBlocks(root)) {
    if (b.walkthrough === undefined || b.skip !== undefined) continue
    out.set(b.walkthrough, [...(out.get(b.walkthrough) ?? []), b])
  }
  return out
}
