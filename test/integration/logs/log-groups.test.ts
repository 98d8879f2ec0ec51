/** On AWS, each function logs (as JSON) to its own log group, `/floe/<stack>/<function-kebab>`, kept a month. */
import { describe, expect, it } from 'vitest'
import { functions } from '../../../lib/infra/functions'
import { logicalId } from '../../../lib/infra/stacks'
import { kebabName } from '../../../lib/core/metrics/services'
import { resourcesNamed, synthTemplates } from '../../support/synth'

const { app } = synthTemplates()

describe('function log groups', () => {
  it('names every function\'s log group /floe/<stack>/<function-kebab>, with a month\'s retention, and sends its JSON logs there', () => {
    const groups = app.findResources('AWS::Logs::LogGroup')
    // Besides the functions' groups: the HTTP API's access log (see test/unit/infra/operations.test.ts).
    const names = Object.values(groups).map((g) => g.Properties.LogGroupName as string).filter((n) => n !== '/floe/FloeApp/api-access')
    expect(Object.keys(groups)).toHaveLength(names.length + 1)
    expect(names.sort()).toEqual(Object.keys(functions).map((k) => `/floe/FloeApp/${kebabName(k)}`).sort())
    expect(names).toContain('/floe/FloeApp/tracking-design')
    expect(names).toContain('/floe/FloeApp/search-loader')
    for (const key of Object.keys(functions)) {
      const [groupId, group] = Object.entries(resourcesNamed(app, 'AWS::Logs::LogGroup', `${logicalId(key)}Logs`))[0]!
      expect(group.Properties).toMatchObject({ LogGroupName: `/floe/FloeApp/${kebabName(key)}`, RetentionInDays: 30 })
      const [fn] = Object.values(resourcesNamed(app, 'AWS::Lambda::Function', `${logicalId(key)}Function`))
      expect(fn.Properties.LoggingConfig).toEqual({ LogFormat: 'JSON', LogGroup: { Ref: groupId } })
    }
  })
})
