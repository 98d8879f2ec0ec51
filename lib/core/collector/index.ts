export * from './config'
export * from './cookies'
export * from './split'
export * from './service'
