/**
 * The port through which the control plane tells the process that runs the
 * stream triggers (the local stack) that the licence was just accepted. On
 * AWS nothing listens: the trigger's state is set at deploy time.
 */

type Listener = () => Promise<void>

let listener: Listener | undefined

/** Sets (or, with undefined, removes) what runs when the licence is accepted here. */
export function onLicenceAccepted(l: Listener | undefined): void {
  listener = l
}

/** Runs the listener (starts enrich locally); resolves once it has. */
export async function licenceAccepted(): Promise<void> {
  await listener?.()
}
