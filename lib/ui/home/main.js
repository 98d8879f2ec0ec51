/**
 * `/home`: the single-instance home, in tabs with hash routes as Snowplow
 * Mini's (`#/overview`, `#/example-events`, `#/registry`, `#/tracking-plans`, `#/control-plane`).
 */
import '@picocss/pico/css/pico.min.css'
import '../shared/styles.css'
import { html, render } from '../shared/html.js'
import { useHash } from '../shared/hooks.js'
import { TopBar } from '../shared/layout.js'
import { Overview } from './overview.js'
import { ExampleEvents } from './examples.js'
import { Registry } from './registry.js'
import { ControlPlane } from './control-plane.js'
import { TrackingPlans } from './tracking-plans.js'

const TABS = [
  { id: 'overview', label: 'Overview', view: Overview },
  { id: 'example-events', label: 'Example events', view: ExampleEvents },
  { id: 'registry', label: 'Registry', view: Registry },
  { id: 'tracking-plans', label: 'Tracking plans', view: TrackingPlans },
  { id: 'control-plane', label: 'Control plane', view: ControlPlane },
]

function Home() {
  const hash = useHash()
  const id = hash.replace(/^\/?/, '').split(/[/?]/)[0]
  const tab = TABS.find((t) => t.id === id) ?? TABS[0]
  const View = tab.view
  return html`<${TopBar} page="home" />
    <main class="container page">
      <nav class="tabs" role="tablist" aria-label="Sections">
        ${TABS.map((t) => html`<a role="tab" href=${`#/${t.id}`} aria-selected=${t === tab} class=${t === tab ? 'active' : ''} data-tab=${t.id}>${t.label}</a>`)}
      </nav>
      <section role="tabpanel" class="tabpanel" data-panel=${tab.id}>
        <${View} />
      </section>
    </main>`
}

if (!location.hash) history.replaceState(null, '', '#/overview')
render(html`<${Home} />`, document.getElementById('app'))
