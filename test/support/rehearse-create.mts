// Creates the data resources of an assembly on the emulators, printing a line per resource created:
// `tsx rehearse-create.mts <assembly dir> <stack name prefix> <endpoints JSON>` (for fault tests).
import { makeClients } from '../../lib/aws/clients'
import { readAssembly } from '../../lib/cli/rehearse-sources'
import { resourcePlan } from '../../lib/core/rehearse/resource-plan'
import { assemblyResolver } from '../../lib/core/rehearse/resolve'
import { createResources } from '../../lib/local/rehearse/resources'

const [dir, prefix, endpoints] = process.argv.slice(2)
const stacks = readAssembly(dir!).stacks.map((s) => ({ ...s, name: `${prefix}${s.name}` }))
const outcome = await createResources(resourcePlan(stacks, assemblyResolver(stacks)), makeClients(JSON.parse(endpoints!)), { log: (l) => console.log(l) })
console.log(`done ${outcome.created.length} ${outcome.failed.length}`)
