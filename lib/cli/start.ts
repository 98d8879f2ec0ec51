import type { Command } from './command'

export const startCommand: Command = {
  name: 'start',
  usage: 'start',
  summary: 'Run the whole stack on this machine (DynamoDB Local, Kinesis, S3, HTTP gateway, stream consumers).',
  async run() {
    const { startFromCli } = await import('../local/cli-start')
    return startFromCli()
  },
}
