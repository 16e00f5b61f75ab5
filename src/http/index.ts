export type { App } from './app-types.js';
export { API_PREFIX } from './prefix.js';
export { registerAccessLog } from './access-log.js';
export { registerErrorHandling, sendProblem, type ValidationStatus } from './errors.js';
export { validatorCompiler, addSharedSchema, compileBodyValidator } from './validation.js';
export * from './schemas.js';
import './types.js';
