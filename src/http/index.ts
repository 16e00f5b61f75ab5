export type { App } from './app-types.js';
export { registerAccessLog } from './access-log.js';
export { registerAuth, type Authenticator } from './auth.js';
export { registerErrorHandling, sendProblem, frameworkErrors, clientErrorHandler, type ValidationStatus } from './errors.js';
export { registerSecurityHeaders } from './headers.js';
export { registerTextChecks, findUnstorableText } from './text.js';
export { validatorCompiler, addSharedSchema, compileBodyValidator } from './validation.js';
export * from './schemas.js';
import './types.js';
