/**
 * What the rehearsal's scenarios run against (lib/local/rehearse/rehearsal.ts
 * explains the choice): the HTTP API's URL, the stack outputs resolved, the
 * resources by their physical names, the functions, and direct clients of the
 * emulators for setting up and reading back.
 */
import type { SQSClient } from '@aws-sdk/client-sqs'
import type { AwsClients } from '../../aws/clients'
import type { FunctionInventory } from '../../core/rehearse/inventory'
import type { ResourcePlan } from '../../core/rehearse/resource-plan'
import type { AssemblyStack } from '../../core/rehearse/template'
import type { FunctionCount } from './functions'

/** What the rehearsal's scenarios run against. */
export interface ScenarioTarget {
  /** The HTTP API's base URL (`http://127.0.0.1:<port>`), routes and authorizer as the template declares them. */
  readonly url: string
  readonly assemblyDir: string
  readonly stacks: readonly AssemblyStack[]
  /** Each stack's outputs, resolved to the rehearsal's resources: stack name → output key → value. */
  readonly outputs: Readonly<Record<string, Readonly<Record<string, string>>>>
  /** The resources as created (tables, streams, buckets, queues by their physical names). */
  readonly resources: ResourcePlan
  /** Each queue's URL as the functions see it (through the SQS proxy), by queue ARN. */
  readonly queueUrls: Readonly<Record<string, string>>
  readonly functions: readonly FunctionInventory[]
  /** The event source mappings running, `{logicalId, function, stream}`. */
  readonly mappingsStarted: readonly { readonly logicalId: string; readonly function: string; readonly stream: string }[]
  /** The emulators' endpoints, unproxied (and the stand-ins': the Data API for the search store, CloudWatch). */
  readonly endpoints: { readonly dynamodb: string; readonly kinesis: string; readonly s3: string; readonly sqs: string; readonly dataApi?: string; readonly cloudwatch?: string }
  /** Each function's invocations and errors so far (the function host's counts). */
  counts(): readonly FunctionCount[]
  /** Clients of the emulators, unproxied, with the emulators' key pair: for setting up and reading back. */
  readonly clients: AwsClients & { readonly sqs: SQSClient }
  /** Waits until every running mapping has nothing left to read (three rounds, for a pipeline of streams); false when a round took longer than `waitMs` (then every later call answers false at once). */
  drain(): Promise<boolean>
  readonly waitMs: number
  readonly log: (line: string) => void
}

