/**
 * Every AWS API operation the functions' code sends (lib/aws, lib/runtime,
 * functions) is one the request classifier knows: a command added without
 * its IAM checks fails here rather than as an unclassified call.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLASSIFIED_OPERATIONS } from '../../../lib/core/rehearse/requests'
import { projectRoot } from '../../../lib/local/handlers'

const require = createRequire(import.meta.url)
const ROOT = projectRoot

/** The SDK package of each service → its SigV4 signing name. */
const SIGNING_NAMES: Readonly<Record<string, string>> = {
  '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/client-kinesis': 'kinesis',
  '@aws-sdk/client-s3': 's3',
  '@aws-sdk/client-sqs': 'sqs',
  '@aws-sdk/client-rds-data': 'rds-data',
  '@aws-sdk/client-cloudwatch': 'monitoring',
  '@aws-sdk/client-lambda': 'lambda',
  '@aws-sdk/client-cloudformation': 'cloudformation',
  '@aws-sdk/client-cloudwatch-logs': 'logs',
}

/** Modules only the command line runs (with the user's own credentials), never a function of the deployment. */
const COMMAND_LINE_ONLY = new Set(['lib/aws/teardown.ts'])

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (COMMAND_LINE_ONLY.has(relative(ROOT, p))) return []
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** `file: signing-name:Operation` for each command a file constructs. */
function operationsSent(): string[] {
  const out = new Set<string>()
  for (const file of [...files(join(ROOT, 'lib/aws')), ...files(join(ROOT, 'lib/runtime')), ...files(join(ROOT, 'functions'))]) {
    const text = readFileSync(file, 'utf8')
    const packages = [...new Set([...text.matchAll(/['"](@aws-sdk\/client-[a-z0-9-]+)['"]/g)].map((m) => m[1]!))]
    for (const m of text.matchAll(/new\s+(?:[A-Za-z_$][\w$]*\.)?([A-Z]\w*)Command\s*\(/g)) {
      const name = `${m[1]}Command`
      const owner = packages.find((p) => typeof (require(p) as Record<string, unknown>)[name] === 'function')
      if (!owner) throw new Error(`${relative(ROOT, file)}: ${name} comes from no SDK package the file imports`)
      out.add(`${SIGNING_NAMES[owner] ?? owner}:${m[1]}`)
    }
  }
  return [...out].sort()
}

describe("the classifier covers the functions' SDK calls", () => {
  it('each operation sent is classified for its service', () => {
    const sent = operationsSent()
    expect(sent.length).toBeGreaterThan(20)
    const missing = sent.filter((op) => {
      const [service, operation] = op.split(':') as [string, string]
      return !CLASSIFIED_OPERATIONS[service]?.includes(operation)
    })
    expect(missing).toEqual([])
  })
})
