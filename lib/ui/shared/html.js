/** htm bound to Preact: components are written as tagged templates, no JSX build step. */
import { h, render } from 'preact'
import htm from 'htm'

export const html = htm.bind(h)
export { render }
