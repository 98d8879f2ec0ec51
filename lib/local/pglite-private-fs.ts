/**
 * PGlite's data directory, kept to its user. PGlite runs PostgreSQL on
 * Emscripten's file system, which sets the mode of every file it creates
 * itself (`chmod` to 0666 or 0644, past the process umask); here every mode
 * it sets loses its group and other bits, so the files are 0600 and the
 * folders 0700 like the rest of the data directory.
 */
import type { PGlite } from '@electric-sql/pglite'
import { NodeFS } from '@electric-sql/pglite/nodefs'

interface Attr {
  mode?: number
  [key: string]: unknown
}
type SetAttr = (target: unknown, attr: Attr) => unknown
interface EmscriptenNodeFs {
  node_ops?: { setattr?: SetAttr }
  stream_ops?: { setattr?: SetAttr }
}

const privateMode = (attr: Attr): Attr => (typeof attr?.mode === 'number' ? { ...attr, mode: attr.mode & ~0o077 } : attr)

function maskSetAttr(ops: { setattr?: SetAttr } | undefined): void {
  const setattr = ops?.setattr
  if (!ops || !setattr || (setattr as { private?: true }).private) return
  const masked: SetAttr = (target, attr) => setattr(target, privateMode(attr))
  ;(masked as { private?: true }).private = true
  ops.setattr = masked
}

/** Emscripten's node file system on `dataDir`, setting no mode with group or other bits. */
export class PrivateNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]) {
    const { emscriptenOpts } = await super.init(pg, opts)
    const maskModes = (mod: { NODEFS?: EmscriptenNodeFs }) => {
      maskSetAttr(mod.NODEFS?.node_ops)
      maskSetAttr(mod.NODEFS?.stream_ops)
    }
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [maskModes as never, ...(emscriptenOpts.preRun ?? [])] } }
  }
}
