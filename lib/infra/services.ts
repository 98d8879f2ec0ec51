/** The control plane's service names, declared in the core (`lib/core/services.ts`) and used here by the function declarations. */
export { serviceAliases, serviceNames, type ServiceName } from '../core/services'
