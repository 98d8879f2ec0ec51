/**
 * The secrets of `floe start`: the registry's super API key and the pages'
 * sign-in credentials, created at the first start, and the lines that show
 * them on the terminal (only there: never in a file under `logs/`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { credentialStoreOf, ensureSuperKey, startCredentials } from '../aws/secrets'
import type { ResourceNames } from '../infra/resources'

/** Banner lines (`lines`) and log lines (`warnings`, which hold no secret). */
export async function firstStartSecrets(ddb: DynamoDBClient, names: ResourceNames, env: NodeJS.ProcessEnv): Promise<{ lines: string[]; warnings: string[] }> {
  const lines: string[] = []
  const warnings: string[] = []
  try {
    const key = await ensureSuperKey(ddb, names, env)
    if (key) {
      lines.push(
        `  registry        Floe registry: no super API key was configured, generated one: ${key}`,
        `                  (shown this once, written to no log; set FLOE_SUPER_API_KEY, or 'npx floe registry superkey --reset' for a new one)`,
      )
    }
  } catch (err) {
    warnings.push(`registry: the super API key could not be checked: ${(err as Error).message}`)
  }
  try {
    const c = await startCredentials(credentialStoreOf(ddb, names), env)
    if (c.generatedPassword) {
      lines.push(`  sign in         username ${c.username}, password ${c.generatedPassword}  (generated: shown this once, written to no log; 'npx floe credentials reset' sets a new one)`)
    } else lines.push(`  sign in         username ${c.username}${c.fromEnv ? ', password from FLOE_PASSWORD' : ''}`)
    if (c.differs) {
      warnings.push(
        `credentials: ${c.differs.join(' and ')} ${c.differs.length > 1 ? 'differ' : 'differs'} from the stored credentials, which stay in force ` +
          `(the variables apply at the first start only); to apply ${c.differs.length > 1 ? 'them' : 'it'}, run 'npx floe credentials reset' with ${c.differs.length > 1 ? 'them' : 'it'} set`,
      )
    }
  } catch (err) {
    warnings.push(`credentials: ${(err as Error).message}`)
  }
  return { lines, warnings }
}
