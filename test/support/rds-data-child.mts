/**
 * The Data API stand-in in a process of its own (for kill -9 tests):
 * `node --import tsx rds-data-child.mts <postgres url> <cluster arn> <secret arn> <database>`;
 * prints `listening <url>` once it listens.
 */
import { startDataApiServer } from '../../lib/local/rds-data-server'

const [url, clusterArn, secretArn, database] = process.argv.slice(2) as [string, string, string, string]
const server = await startDataApiServer({ connect: { connectionString: url }, clusterArn, secretArn, database })
console.log(`listening ${server.url}`)
