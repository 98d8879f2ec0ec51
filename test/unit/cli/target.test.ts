/** `--stack`, `--region`, `--profile`: taken out of a command's arguments and checked before anything is called. */
import { describe, expect, it } from 'vitest'
import { takeTargetOptions } from '../../../lib/cli/target'

const usage = 'org create --name <name>'

describe('target options', () => {
  it('takes --stack, --region and --profile in either form, leaving the rest in order', () => {
    expect(takeTargetOptions(['--name', 'A', '--stack', 'FloeApp', '--region=eu-west-1', '--profile', 'prod'], usage)).toEqual({
      target: { stack: 'FloeApp', region: 'eu-west-1', profile: 'prod' },
      rest: ['--name', 'A'],
    })
    expect(takeTargetOptions(['raw', '--json'], usage)).toEqual({ target: {}, rest: ['raw', '--json'] })
    const arn = 'arn:aws:cloudformation:eu-north-1:123456789012:stack/FloeApp/6d0c1f2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f'
    expect(takeTargetOptions(['--stack', arn], usage).target).toEqual({ stack: arn })
  })

  it('refuses what cannot name a stack, region or profile, naming the option', () => {
    const fails = (args: string[]) => () => takeTargetOptions(args, usage)
    expect(fails(['--stack'])).toThrow(/^--stack needs a value\nUsage: floe org create/)
    expect(fails(['--stack', '--name', 'x'])).toThrow(/^--stack needs a value/)
    expect(fails(['--stack=A', '--stack=B'])).toThrow(/^--stack is given twice/)
    expect(fails(['--stack', 'floe_app'])).toThrow(/^--stack: 'floe_app' is not a CloudFormation stack name/)
    expect(fails(['--stack', 'A'.repeat(129)])).toThrow(/is not a CloudFormation stack name/)
    expect(fails(['--stack', 'A', '--region', 'Europe'])).toThrow(/^--region: 'Europe' is not an AWS region name/)
    expect(fails(['--stack', 'A', '--profile', 'a b'])).toThrow(/^--profile: 'a b' is not a profile name/)
    expect(fails(['--profile', 'prod'])).toThrow(/^--profile goes with --stack <name>/)
  })
})
