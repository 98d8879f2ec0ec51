/**
 * A search loader in a process of its own: loads the records given on stdin
 * (`{"url", "schema", "stream", "lines": [...]}`, one JSON document) into the
 * store as the `searchLoader` function does: prints `writing` when it starts,
 * `loaded <n>` when the batch is stored, and exits.
 */
import { loadBatch, type LoaderStream } from '../../lib/core/search/loader'
import { searchDb } from '../../lib/core/search/store'
import { postgresClient } from '../../lib/runtime/postgres'

const chunks: Buffer[] = []
for await (const c of process.stdin) chunks.push(c as Buffer)
const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { url: string; schema: string; stream: LoaderStream; lines: string[] }
const sql = postgresClient(job.url)
process.stdout.write('writing\n')
const out = await loadBatch(searchDb(sql, job.schema), job.stream, job.lines.map((text, i) => ({ id: String(i), text })), Date.now())
process.stdout.write(`loaded ${out.loaded}\n`)
await sql.close()
