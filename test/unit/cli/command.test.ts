/** Argument checks shared by the `floe` commands: the message names what was expected and repeats the usage line. */
import { describe, expect, it } from 'vitest'
import { positionals, usageError, UsageError } from '../../../lib/cli/command'
import { registryKeygenCommand, registryLintCommand, registrySuperKeyCommand } from '../../../lib/cli/registry'
import { schemaCompatCommand } from '../../../lib/cli/schema'

describe('command arguments', () => {
  it('takes between min and max positional arguments', () => {
    expect(positionals(registrySuperKeyCommand, ['u', 'k'], 2, 3)).toEqual(['u', 'k'])
    expect(positionals(registrySuperKeyCommand, ['u', 'k', 'n'], 2, 3)).toEqual(['u', 'k', 'n'])
    expect(() => positionals(registrySuperKeyCommand, ['u'], 2, 3)).toThrow(
      'expected <registryUrl> <currentSuperApiKey> [<newSuperApiKey>]\nUsage: floe registry superkey <registryUrl> <currentSuperApiKey> [<newSuperApiKey>]',
    )
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
