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

/** Every command of the `floe` CLI. Command groups add their entries here. */
export const commands: readonly Command[] = [startCommand, ...registryCommands, tailCommand, logsCommand, schemaCompatCommand, ...orgCommands, ...apikeyCommands, enrichCommand, credentialsResetCommand]

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

export async function run(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    process.stdout.write(help())
    return argv.length === 0 ? 2 : 0
  }
  const found = findCommand(argv)
  if (!found) {
    process.stderr.write(`floe: unknown command '${argv.join(' ')}'\n\n${help()}`)
    return 2
  }
  if (found.rest.includes('--help') || found.rest.includes('-h')) {
    process.stdout.write(`Usage: floe ${found.command.usage}\n\n${found.command.summary}\n`)
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
