/**
 * The port through which the control plane reaches the process serving HTTPS
 * (the local stack): submit a domain, read the state. On AWS nothing listens:
 * HTTPS there is the API's custom domain, set at deploy time.
 */
import type { HttpsState } from '../core/https/rules'

export interface DomainAnswer {
  readonly status: number
  readonly message: string
}

export interface HttpsControl {
  /** Checks the domain and obtains its certificate (or starts to: 202). */
  submit(domain: string): Promise<DomainAnswer>
  state(): HttpsState
}

let control: HttpsControl | undefined

/** Sets (or, with undefined, removes) the HTTPS of this process. */
export function setHttpsControl(c: HttpsControl | undefined): void {
  control = c
}

export function httpsControl(): HttpsControl | undefined {
  return control
}
