import type { FastifyInstance } from 'fastify';
import { assertCan } from './permissions.js';
import type { Principal } from './principal.js';
import { unauthorized } from '../lib/errors.js';
import '../http/types.js';
import type { Action, Resource } from './permissions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission-matrix cell this route needs; every non-public route names one. */
    permission?: readonly [Resource, Action];
  }
  interface FastifyRequest {
    /** The authenticated caller; set on every non-public route. */
    principal: Principal;
  }
}

export interface Authenticator {
  /** The principal behind a bearer token; throws a 401 AppError when it is not valid. */
  authenticate(token: string): Promise<Principal>;
}

/**
 * Authentication and authorisation for every route under the API prefix: a route is either
 * `public` or names its permission-matrix cell; a route that does neither refuses to register.
 */
export function registerAuth(app: FastifyInstance, authenticator: Authenticator, prefix: string): void {
  app.decorateRequest('principal', null as unknown as Principal);

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(prefix)) return;
    const config = route.config as { public?: boolean; permission?: unknown } | undefined;
    if (!config?.public && !config?.permission) {
      throw new Error(`Route ${route.method} ${route.url} names no permission and is not public`);
    }
  });

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if (!request.routeOptions.url || config.public || !config.permission) return;
    const header = request.headers.authorization;
    if (!header) throw unauthorized('Send an Authorization: Bearer <token> header');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized('The Authorization header must be "Bearer <token>"');
    const principal = await authenticator.authenticate(match[1]!);
    request.principal = principal;
    request.log = request.log.child({ principal: `${principal.kind}:${principal.id}`, role: principal.role });
    const [resource, action] = config.permission;
    assertCan(principal, resource, action);
  });
}
