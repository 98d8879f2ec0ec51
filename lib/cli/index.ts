import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Command } from './command'
import { networkFailure, UsageError } from './command'

/**
 * Every command of the `floe` CLI, by the first word of its name, in the
 * order of the help. A group's module is loaded only when its commands are
 * wanted: `floe registry push` does not load the AWS SDK, the local stack or
 * enrich. Command groups add their entries here.
 */
const GROUPS: ReadonlyArray<readonly [string, () => Promise<readonly Command[]>]> = [
  ['start', async () => [(await import('./start')).startCommand]],
  ['registry', async () => (await import('./registry')).registryCommands],
  ['tail', async () => [(await import('./tail')).tailCommand]],
  ['logs', async () => [(await import('./logs')).logsCommand]],
  ['schema', async () => [(await import('./schema')).schemaCompatCommand]],
  ['org', async () => (await import('./org')).orgCommands],
  ['apikey', async () => (await import('./apikey')).apikeyCommands],
  ['enrich', async () => [(await import('./enrich')).enrichCommand]],
  ['credentials', async () => [(await import('./credentials')).credentialsResetCommand]],
  ['recover', async () => [(await import('./recover')).recoverCommand]],
  ['rehearse', async () => [(await import('./rehearse')).rehearseCommand]],
  ['teardown', async () => [(await import('./teardown')).teardownCommand]],
]

/** The commands of the group `word` (the first word of argv), or all of them. */
export async function loadCommands(word?: string): Promise<readonly Command[]> {
  const wanted = GROUPS.filter(([w]) => word === undefined || w === word)
  return (await Promise.all(wanted.map(([, load]) => load()))).flat()
}

function help(commands: readonly Command[]): string {
  const rows = commands.flatMap((c) => [`  floe ${c.usage}`, `      ${c.summary}`])
  return ['Usage: floe <command> [options]', '', 'Commands:', ...rows, '', "Run 'floe <command> --help' for one command's usage.", ''].join('\n')
}

/** Finds the command whose (possibly multi-word) name is the longest prefix of argv. */
export async function findCommand(argv: string[]): Promise<{ command: Command; rest: string[] } | undefined> {
  let best: { command: Command; rest: string[] } | undefined
  for (const command of await loadCommands(argv[0])) {
    const words = command.name.split(' ')
    if (words.every((w, i) => argv[i] === w) && (!best || words.length > best.command.name.split(' ').length)) {
      best = { command, rest: argv.slice(words.length) }
    }
  }
  return best
}

/** The help of a command group (`registry`, `org`…): its commands; undefined when `word` is no group. */
export async function groupHelp(word: string): Promise<string | undefined> {
  const members = (await loadCommands(word)).filter((c) => c.name.startsWith(`${word} `))
  if (members.length === 0) return undefined
  const rows = members.flatMap((c) => [`  floe ${c.usage}`, `      ${c.summary}`])
  return [`Usage: floe ${word} <command> [options]`, '', 'Commands:', ...rows, '', `Run 'floe ${word} <command> --help' for one command's usage.`, ''].join('\n')
}

function version(): string {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version?: string }
  return `floe ${pkg.version ?? 'unknown'}\n`
}

export async function run(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    process.stdout.write(help(await loadCommands()))
    return argv.length === 0 ? 2 : 0
  }
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
    process.stdout.write(version())
    return 0
  }
  const found = await findCommand(argv)
  if (!found) {
    const group = argv[0] === undefined ? undefined : await groupHelp(argv[0])
    const asked = argv.length === 2 && (argv[1] === '--help' || argv[1] === '-h')
    if (group !== undefined && (asked || argv.length === 1)) {
      if (asked) process.stdout.write(group)
      else process.stderr.write(`floe ${argv[0]}: which command?\n\n${group}`)
      return asked ? 0 : 2
    }
    process.stderr.write(`floe: unknown command '${argv.join(' ')}'\n\n${group ?? help(await loadCommands())}`)
    return 2
  }
  if (found.rest.includes('--help') || found.rest.includes('-h')) {
    const details = found.command.details === undefined ? '' : `\n${found.command.details.trimEnd()}\n`
    process.stdout.write(`Usage: floe ${found.command.usage}\n\n${found.command.summary}\n${details}`)
    return 0
  }
  try {
    return await found.command.run(found.rest)
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`floe ${found.command.name}: ${err.message}\n`)
      return 2
    }
    const network = networkFailure(err)
    if (network !== undefined) {
      process.stderr.write(`floe ${found.command.name}: ${network}\n`)
      return 2
    }
    throw err
  }
}
