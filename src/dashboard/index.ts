export { DashboardBundle, WEB_DIR, type Bundle } from './bundle.js';
export { registerDashboardRoutes, registerRootRedirect, contentSecurityPolicy, APP_PATH } from './routes.js';
