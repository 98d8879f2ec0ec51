/** The version of Floe (the stack, as `GET /control-plane/version` answers it). */
export const FLOE_VERSION = '0.1.0'
