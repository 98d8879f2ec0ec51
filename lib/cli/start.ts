import type { Command } from './command'

export const startCommand: Command = {
  name: 'start',
  usage: 'start',
  summary: 'Run the whole stack on this machine (DynamoDB Local, Kinesis, S3, HTTP gateway, stream consumers) until Ctrl+C, SIGINT or SIGTERM.',
  details: [
    'Environment variables:',
    '  PORT                          port of the HTTP gateway (default 8080; 0 picks a free one)',
    '  FLOE_HOST                     IPv4 address every server listens on (default 127.0.0.1)',
    '  FLOE_DATA_DIR                 data directory: tables, streams, buckets, logs, endpoints.json (default .floe)',
    '  FLOE_USERNAME, FLOE_PASSWORD  sign-in of the pages on first start (else a generated password, printed once)',
    '  ACCEPT_LIMITED_USE_LICENSE    yes: accept the Snowplow Limited Use License, so that enrich runs (or accept it on /home, Control plane)',
    '  FLOE_COLLECTOR_CONFIG         collector configuration (JSON); its rootResponse replaces the redirect of GET / to /home',
    '  FLOE_ENRICH_CONFIG            enrich configuration file (HOCON)',
    '  FLOE_RESOLVER_CONFIG          Iglu resolver configuration (JSON)',
    '  FLOE_IGLU_CENTRAL_URL         Iglu Central mirror to use instead of https://iglucentral.com',
    '  FLOE_RESOLVER_CACHE_TTL, FLOE_RESOLVER_LOOKUP_TIMEOUT  schema cache lifetime and lookup budget',
    '  FLOE_BATCHING_WINDOW_SECONDS  longest wait of a stream trigger to fill a batch (default each one\'s own, as on AWS: 60 for the archive)',
    '  FLOE_JAVA                     the java executable for DynamoDB Local (default: java on PATH)',
    '  FLOE_WATCH_PARENT             1: stop when the launching process exits (on by default under npm)',
  ].join('\n'),
  async run() {
    const { startFromCli } = await import('../local/cli-start')
    return startFromCli()
  },
}
