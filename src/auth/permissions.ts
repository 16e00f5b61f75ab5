import { forbidden } from '../lib/errors.js';
import type { Principal, RoleName } from './principal.js';

export type Resource =
  | 'resellers'
  | 'users'
  | 'merchants'
  | 'templates'
  | 'configurations'
  | 'numbers'
  | 'blacklist'
  | 'leads'
  | 'analytics'
  | 'tokens'
  | 'flags'
  | 'audit';
export type Action = 'read' | 'write';

const ALL: readonly RoleName[] = ['admin', 'reseller', 'merchant', 'user'];

/**
 * The permission matrix, written once. Every protected route names one cell of it;
 * the HTTP layer refuses to start a route that names none. What a role may *see* inside a cell is
 * narrowed further by scope (scope.ts): a reseller acts only inside its reseller, a merchant or
 * user only inside its merchant.
 */
export const PERMISSIONS: Readonly<Record<Resource, Readonly<Record<Action, readonly RoleName[]>>>> = {
  resellers: { read: ['admin', 'reseller'], write: ['admin'] },
  users: { read: ['admin', 'reseller'], write: ['admin', 'reseller'] },
  merchants: { read: ['admin', 'reseller', 'merchant'], write: ['admin', 'reseller'] },
  templates: { read: ALL, write: ['admin', 'reseller', 'merchant'] },
  configurations: { read: ['admin', 'reseller', 'merchant'], write: ['admin', 'reseller'] },
  numbers: { read: ['admin', 'reseller'], write: ['admin'] },
  blacklist: { read: ['admin', 'reseller', 'merchant'], write: ['admin', 'reseller'] },
  leads: { read: ALL, write: ALL },
  analytics: { read: ALL, write: [] },
  tokens: { read: ['admin', 'reseller', 'merchant'], write: ['admin', 'reseller', 'merchant'] },
  flags: { read: ['admin'], write: ['admin'] },
  audit: { read: ['admin', 'reseller'], write: [] },
};

export function can(role: RoleName, resource: Resource, action: Action): boolean {
  return PERMISSIONS[resource][action].includes(role);
}

export function assertCan(principal: Principal, resource: Resource, action: Action): void {
  if (!can(principal.role, resource, action)) {
    throw forbidden(`The ${principal.role} role may not ${action === 'read' ? 'read' : 'change'} ${resource}`);
  }
}
