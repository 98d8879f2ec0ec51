/** Seeds the organization and API key named by `FLOE_ORG_ID`, `FLOE_API_KEY_ID`, `FLOE_API_KEY` into a local stack. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { seed, seedConfig } from '../core/tracking-design/accounts'
import type { ResourceNames } from '../infra/resources'
import { DynamoAccountStore } from './tracking-design-store'

export async function seedTrackingDesign(
  ddb: DynamoDBClient,
  names: ResourceNames,
  env: Readonly<Record<string, string | undefined>> = process.env,
  log: (line: string) => void = () => {},
): Promise<void> {
  const cfg = seedConfig(env)
  if (!cfg.ok) throw new Error(cfg.message)
  if (!cfg.value) return
  const result = await seed(new DynamoAccountStore(ddb, names.tables.apiKeys, names.tables.settings), cfg.value, new Date())
  log(`tracking design: organization ${cfg.value.orgId} with API key ${cfg.value.keyId} ${result === 'created' ? 'seeded' : 'already present'}`)
}
