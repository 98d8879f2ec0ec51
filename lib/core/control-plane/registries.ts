/** External Iglu registries added in the control plane: their shape and the checks of the form. */
import { isUuid } from '../iglu/apikeys'

export interface ExternalRegistry {
  readonly name: string
  /** The registry's root: an Iglu Server's `…/api` or a static registry's base (schemas under `/schemas/…`). */
  readonly uri: string
  readonly priority: number
  readonly vendorPrefixes: readonly string[]
  readonly apikey?: string
  readonly addedAt: string
  /** False: kept, but not used by the resolvers (absent: used). */
  readonly enabled?: boolean
}

/** Repository names the deployment's resolvers already use. */
export const RESERVED_REGISTRY_NAMES = ['Floe registry', 'Floe embedded', 'Iglu Central', 'Iglu Central snapshot']

const VENDOR_PREFIX = /^[A-Za-z0-9_.*-]{1,128}$/

/** The registry of the form's fields, or the message of the first problem (Mini's wording where it has one). */
export function externalRegistryFromForm(form: Readonly<Record<string, string | undefined>>, now: Date): { ok: true; value: ExternalRegistry } | { ok: false; message: string } {
  for (const p of ['vendor_prefix', 'uri', 'name', 'priority']) {
    if (form[p] === undefined || form[p]!.trim() === '') return { ok: false, message: `missing parameter ${p}` }
  }
  const name = form.name!.trim()
  if (name.length > 64 || /[\u0000-\u001f\u007f]/.test(name)) return { ok: false, message: 'name must be 1 to 64 printable characters' }
  if (RESERVED_REGISTRY_NAMES.includes(name)) return { ok: false, message: `name '${name}' is taken by a built-in repository; choose another` }
  const priorityText = form.priority!.trim()
  if (!/^\d{1,7}$/.test(priorityText)) return { ok: false, message: 'Priority must be an integer (0 to 9999999)' }
  const vendorPrefixes = form.vendor_prefix!.split(',').map((v) => v.trim()).filter(Boolean)
  const badPrefix = vendorPrefixes.find((v) => !VENDOR_PREFIX.test(v))
  if (vendorPrefixes.length === 0 || badPrefix !== undefined) return { ok: false, message: `vendor_prefix must be one or more vendor prefixes separated by commas (e.g. com.acme), got '${badPrefix ?? form.vendor_prefix}'` }
  const uriText = form.uri!.trim()
  let url: URL
  try {
    url = new URL(uriText)
  } catch {
    return { ok: false, message: `uri must be an http or https URL, got '${uriText.slice(0, 200)}'` }
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || uriText.length > 2048) return { ok: false, message: `uri must be an http or https URL, got '${uriText.slice(0, 200)}'` }
  if (url.username || url.password) return { ok: false, message: 'uri must not carry credentials; give the API key in apikey' }
  const apikey = form.apikey?.trim() || undefined
  if (apikey !== undefined && !isUuid(apikey)) return { ok: false, message: 'Given apikey is not a valid UUID.' }
  return { ok: true, value: { name, uri: uriText.replace(/\/+$/, ''), priority: Number(priorityText), vendorPrefixes, ...(apikey ? { apikey } : {}), addedAt: now.toISOString() } }
}
