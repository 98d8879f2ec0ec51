import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Command } from './command'
import { UsageError } from './command'
import { startCommand } from './start'
import { registryCommands } from './registry'
import { tailCommand } from './tail'
import { logsCommand } from './logs'
import { orgCommands } from './org'
import { apikeyCommands } from './apikey'
import { schemaCompatCommand } from './schema'
import { enrichCommand } from './enrich'
import { credentialsResetCommand } from './credentials'
import { recoverCommand } from './recover'

/** Every command of the `floe` CLI. Command groups add their entries here. */
export const commands: readonly Command[] = [startCommand, ...registryCommands, tailCommand, logsCommand, schemaCompatCommand, ...orgCommands, ...apikeyCommands, enrichCommand, credentialsResetCommand, recoverCommand]

function help(): string {
  const rows = commands.flatMap((c) => [`  floe ${c.usage}`, `      ${c.summary}`])
  return ['Usage: floe <command> [options]', '', 'Commands:', ...rows, '', "Run 'floe <command> --help' for one command's usage.", ''].join('\n')
}

/** Finds the command whose (possibly multi-word) name is the longest prefix of argv. */
export function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  let best: { command: Command; rest: string[] } | undefined
  for (const command of commands) {
    const words = command.name.split(' ')
    if (words.every((w, i) => argv[i] === w) && (!best || words.length > best.command.name.split(' ').length)) {
      best = { command, rest: argv.slice(words.length) }
    }
  }
  return best
}

/** The help of a command group (`registry`, `org`…): its commands; undefined when `word` is no group. */
export function groupHelp(word: string): string | undefined {
  const members = commands.filter((c) => c.name.startsWith(`${word} `))
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
    process.stdout.write(help())
    return argv.length === 0 ? 2 : 0
  }
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
    process.stdout.write(version())
    return 0
  }
  const found = findCommand(argv)
  if (!found) {
    const group = argv[0] === undefined ? undefined : groupHelp(argv[0])
    const asked = argv.length === 2 && (argv[1] === '--help' || argv[1] === '-h')
    if (group !== undefined && (asked || argv.length === 1)) {
      if (asked) process.stdout.write(group)
      else process.stderr.write(`floe ${argv[0]}: which command?\n\n${group}`)
      return asked ? 0 : 2
    }
    process.stderr.write(`floe: unknown command '${argv.join(' ')}'\n\n${group ?? help()}`)
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
    throw err
  }
}
