/**
 * How DynamoDB Local is started so that it listens on one address only.
 *
 * DynamoDB Local has no option for its listening address (it listens on every
 * interface), so it is started through `BindDynamoDbLocal.java`, next to this
 * file, which sets the host on its server's connectors before they open.
 * Running a `.java` file compiles it each time (Java's source launcher: about
 * 3 s of CPU), so the class is compiled once into a per-user cache directory
 * under the OS temp directory, named by a hash of the source and of the
 * DynamoDB Local version, and started from there; when that directory is not
 * safe to use (not ours, or open to others), or compiling fails, the source
 * file is run directly.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const LAUNCHER_CLASS = 'BindDynamoDbLocal'
export const LAUNCHER_SOURCE = fileURLToPath(new URL(`./${LAUNCHER_CLASS}.java`, import.meta.url))

/** Thrown when the Java runtime cannot compile the launcher (no `jdk.compiler` module) and no compiled copy exists. */
export class JavaCompilerMissingError extends Error {
  override readonly name = 'JavaCompilerMissingError'
}

/** The per-user cache root: `<tmp>/floe-<uid>`. */
export function defaultCacheRoot(): string {
  return join(tmpdir(), `floe-${process.getuid?.() ?? 'user'}`)
}

/** Why `dir` must not hold code this process runs (undefined when it is a directory of ours that only we can write). */
export function unsafeDirProblem(dir: string): string | undefined {
  const st = lstatSync(dir)
  if (!st.isDirectory()) return `${dir} is not a directory`
  if (process.platform === 'win32') return undefined
  if (process.getuid && st.uid !== process.getuid()) return `${dir} belongs to another user (uid ${st.uid})`
  if ((st.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)})`
  return undefined
}

/** The JVM arguments that start DynamoDB Local (in `dynamoDir`) bound to `host`: from the compiled class when `classDir` holds it, else from the source. */
export function launcherArgs(dynamoDir: string, classDir: string | undefined, host: string): string[] {
  const jar = join(dynamoDir, 'DynamoDBLocal.jar')
  if (classDir && existsSync(join(classDir, `${LAUNCHER_CLASS}.class`))) return ['-cp', `${classDir}${delimiter}${jar}`, LAUNCHER_CLASS, host]
  return ['-cp', jar, LAUNCHER_SOURCE, host]
}

function run(java: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(java, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    const collect = (d: Buffer) => (output = (output + d.toString()).slice(-4000))
    child.stdout!.on('data', collect)
    child.stderr!.on('data', collect)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      resolve({ code: -1, output: err.message })
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

const compiled = new Map<string, Promise<string | undefined>>()

/**
 * The directory holding the compiled launcher for this DynamoDB Local, compiling it first when
 * needed (once per process and cache key; concurrent processes each compile into a directory of
 * their own and the first rename wins). Undefined when the source is to be run instead.
 */
export function compiledLauncher(java: string, dynamoDir: string, log: (line: string) => void, cacheRoot = defaultCacheRoot()): Promise<string | undefined> {
  const key = createHash('sha256').update(readFileSync(LAUNCHER_SOURCE)).update('\0').update(basename(dynamoDir)).digest('hex').slice(0, 16)
  const classDir = join(cacheRoot, `dynamodb-launcher-${key}`)
  const memo = `${java}\0${classDir}`
  let p = compiled.get(memo)
  if (!p) {
    p = compile(java, dynamoDir, cacheRoot, classDir, log)
    compiled.set(memo, p)
    p.catch(() => compiled.delete(memo))
  }
  return p
}

async function compile(java: string, dynamoDir: string, cacheRoot: string, classDir: string, log: (line: string) => void): Promise<string | undefined> {
  try {
    mkdirSync(cacheRoot, { recursive: true, mode: 0o700 })
    const problem = unsafeDirProblem(cacheRoot)
    if (problem) {
      log(`DynamoDB Local's launcher is not cached (${problem}); it is compiled at each start`)
      return undefined
    }
  } catch (err) {
    log(`DynamoDB Local's launcher is not cached (${(err as Error).message}); it is compiled at each start`)
    return undefined
  }
  if (existsSync(join(classDir, `${LAUNCHER_CLASS}.class`))) return classDir
  const out = mkdtempSync(join(cacheRoot, 'compiling-'))
  try {
    const jar = join(dynamoDir, 'DynamoDBLocal.jar')
    const r = await run(java, ['-cp', jar, LAUNCHER_SOURCE, '--compile', LAUNCHER_SOURCE, out], 120_000)
    if (r.code !== 0 || !existsSync(join(out, `${LAUNCHER_CLASS}.class`))) {
      if (/jdk\.compiler/.test(r.output)) {
        throw new JavaCompilerMissingError(
          `'${java}' cannot start DynamoDB Local bound to one address: that needs Java's jdk.compiler module (in openjdk-17-jre-headless; missing from some minimal runtimes). Install a full Java 17+ runtime or set FLOE_JAVA to one.`,
        )
      }
      log(`DynamoDB Local's launcher could not be compiled into ${cacheRoot} (exit ${r.code}): ${r.output.trim().split('\n')[0] ?? ''}; it is compiled at each start`)
      return undefined
    }
    try {
      renameSync(out, classDir)
    } catch (err) {
      // Another process renamed its copy first: the same source, the same class.
      if (!existsSync(join(classDir, `${LAUNCHER_CLASS}.class`))) throw err
    }
    return classDir
  } catch (err) {
    if (err instanceof JavaCompilerMissingError) throw err
    log(`DynamoDB Local's launcher could not be cached in ${cacheRoot} (${(err as Error).message}); it is compiled at each start`)
    return undefined
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}
