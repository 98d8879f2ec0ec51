/**
 * The pages of the single-instance experience, each an esbuild entry point
 * served under its own path: `/home` (overview, example events, registry,
 * control plane) and `/dashboard-ui` (the event explorer).
 */
export interface UiPage {
  /** The first path segment the page is served under (`/home`, `/dashboard-ui`). */
  readonly name: string
  readonly title: string
  /** The browser module, from the project root. */
  readonly entry: string
}

export const uiPages = [
  { name: 'home', title: 'Floe · Home', entry: 'lib/ui/home/main.js' },
  { name: 'dashboard-ui', title: 'Floe · Events', entry: 'lib/ui/dashboard/main.js' },
] as const satisfies readonly UiPage[]

export type UiPageName = (typeof uiPages)[number]['name']

/** Whether a first path segment is one of the pages. */
export function isUiPage(name: string): name is UiPageName {
  return uiPages.some((p) => p.name === name)
}
