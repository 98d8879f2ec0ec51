import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LocalEndpoints } from '../../../lib/aws/clients'
import type { LoadJob, LoadResult } from './load-client'

const here = dirname(fileURLToPath(import.meta.url))

function tsx(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(here, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve(out.slice(0, nl))
    })
    child.once('exit', (code) => reject(new Error(`${child.spawnargs.join(' ')} exited with ${code} before answering`)))
  })
}

/** Stops a child process with SIGTERM; resolves once it has exited. */
function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

/** Runs a benchmark's main function; the process exits 0 when it resolves, 1 (with the error) when it fails. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
}

/** Starts the emulators in their own process. */
export async function emulatorsProcess(): Promise<{ endpoints: LocalEndpoints; pid: number; stop(): Promise<void> }> {
  const child = tsx('emulators.ts', [])
  const endpoints = JSON.parse(await firstLine(child)) as LocalEndpoints
  return {
    endpoints,
    pid: child.pid!,
    stop: () => stopChild(child),
  }
}

/** Runs a load job from a separate client process. */
export async function loadFromOtherProcess(job: LoadJob): Promise<LoadResult> {
  return JSON.parse(await firstLine(tsx('load-client.ts', [JSON.stringify(job)]))) as LoadResult
}

/** Starts a Kinesis endpoint that accepts and drops every write, in its own process. */
export async function nullKinesisProcess(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = tsx('null-kinesis.ts', [])
  const { url } = JSON.parse(await firstLine(child)) as { url: string }
  return {
    url,
    pid: child.pid!,
    stop: () => stopChild(child),
  }
}

/** CPU time (user + system, ms) a process and its descendants have used so far, from /proc; 0 where /proc is absent. */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12])
    let total = (ticks * 1000) / 100
    for (const child of childrenOf(pid)) total += cpuMsOf(child)
    return total
  } catch {
    return 0
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
      try {
        return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
      } catch {
        return []
      }
    })
  } catch {
    return []
  }
}
