/** Argument checks shared by the `floe` commands: the message names what was expected and repeats the usage line. */
import { describe, expect, it } from 'vitest'
import { positionals, usageError, UsageError } from '../../../lib/cli/command'
import { registryKeygenCommand, registryLintCommand, registrySuperKeyCommand } from '../../../lib/cli/registry'
import { schemaCompatCommand } from '../../../lib/cli/schema'

describe('command arguments', () => {
  it('takes between min and max positional arguments', () => {
    const command = { name: 'x y', usage: 'x y <a> <b> [<c>] [--json]', summary: '', run: async () => 0 }
    expect(positionals(command, ['u', 'k'], 2, 3)).toEqual(['u', 'k'])
    expect(positionals(command, ['u', 'k', 'n'], 2, 3)).toEqual(['u', 'k', 'n'])
    expect(() => positionals(command, ['u'], 2, 3)).toThrow('expected <a> <b> [<c>]\nUsage: floe x y <a> <b> [<c>] [--json]')
  })

  it('registry commands name their registry by URL or by --stack', async () => {
    const usage = 'Usage: floe registry superkey (<registryUrl> | --stack <name> [--region <region>] [--profile <profile>]) <currentSuperApiKey> [<newSuperApiKey>]'
    await expect(registrySuperKeyCommand.run(['u'])).rejects.toThrow(`expected <registryUrl> <currentSuperApiKey> [<newSuperApiKey>]\n${usage}`)
    await expect(registrySuperKeyCommand.run(['--stack', 'FloeApp'])).rejects.toThrow(`expected <currentSuperApiKey> [<newSuperApiKey>]\n${usage}`)
    await expect(registrySuperKeyCommand.run(['u', 'k', '--region', 'eu-west-1'])).rejects.toThrow(/^--region goes with --stack <name>/)
    await expect(registrySuperKeyCommand.run(['k', '--stack', '1bad'])).rejects.toThrow(/^--stack: '1bad' is not a CloudFormation stack name/)
    await expect(registrySuperKeyCommand.run(['k', '--stack'])).rejects.toThrow(/^--stack needs a value/)
  })

  it('names the positional arguments only, not the options', async () => {
    await expect(registryLintCommand.run([])).rejects.toThrow(/^expected <schemaDir>\nUsage: floe registry lint <schemaDir> \[--skip/)
    await expect(registryKeygenCommand.run(['com.acme'])).rejects.toBeInstanceOf(UsageError)
    await expect(schemaCompatCommand.run(['a.json'])).rejects.toThrow(/^expected <a\.json> <b\.json>\nUsage: floe schema compat /)
  })

  it('puts the problem before the usage line, or the usage line alone', () => {
    expect(usageError('apikey revoke <keyId>', '--x is unknown').message).toBe('--x is unknown\nUsage: floe apikey revoke <keyId>')
    expect(usageError('apikey revoke <keyId>').message).toBe('Usage: floe apikey revoke <keyId>')
  })
})

describe('the commands a newcomer needs on a deployment', () => {
  it('each takes --stack, and its help says so', async () => {
    const { loadCommands } = await import('../../../lib/cli/index')
    const commands = await loadCommands()
    const byName = new Map(commands.map((c) => [c.name, c]))
    for (const name of ['credentials reset', 'registry superkey', 'registry keygen', 'registry push', 'tail', 'logs', 'org create', 'apikey create']) {
      const c = byName.get(name)
      expect(c, name).toBeDefined()
      expect(c!.usage, name).toContain('--stack <name> [--region <region>] [--profile <profile>]')
    }
    expect(byName.get('logs')!.summary).toContain('With --stack: the deployed function\'s CloudWatch log group (/floe/<stack>/<function>')
  })

  it('floe logs refuses --region without --stack, as the other commands do', async () => {
    const { runLogs } = await import('../../../lib/cli/logs')
    await expect(runLogs(['enrich', '--region', 'eu-west-1'], { out: () => {} })).rejects.toThrow(/^--region goes with --stack <name>/)
    await expect(runLogs(['enrich', '--stack', '9x'], { out: () => {} })).rejects.toThrow(/^--stack: '9x' is not a CloudFormation stack name/)
  })
})
