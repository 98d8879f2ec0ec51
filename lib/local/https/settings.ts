/** The HTTPS settings of `floe start` from the environment, with the CA file read: a setting that cannot work stops the start. */
import { readFileSync } from 'node:fs'
import { httpsSettings, type HttpsSettings } from '../../core/https/rules'

export class HttpsSettingsError extends Error {}

export function httpsFromEnvironment(env: Readonly<Record<string, string | undefined>>): { settings: HttpsSettings; ca?: string } {
  const r = httpsSettings(env)
  if (!r.ok) throw new HttpsSettingsError(r.errors.join('\n'))
  const file = r.value.acmeCaFile
  if (file === undefined) return { settings: r.value }
  let ca: string
  try {
    ca = readFileSync(file, 'utf8')
  } catch (err) {
    throw new HttpsSettingsError(`FLOE_ACME_CA_FILE ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if (!/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.test(ca)) throw new HttpsSettingsError(`FLOE_ACME_CA_FILE ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
  return { settings: r.value, ca }
}
