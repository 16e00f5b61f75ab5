import { forbidden } from '../lib/errors.js';
import type { Principal, RoleName } from './principal.js';

export type Resource =
  | 'resellers'
  | 'users'
  | 'merchants'
  | 'templates'
  | 'configurations'
  | 'numbers'
  | 'trunks'
  | 'blacklist'
  | 'dnc_lists'
  | 'knowledge'
  | 'privacy'
  | 'leads'
  | 'campaigns'
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
  // A reseller's own SIP trunks (an extension): resellers manage theirs.
  trunks: { read: ['admin', 'reseller'], write: ['admin', 'reseller'] },
  blacklist: { read: ['admin', 'reseller', 'merchant'], write: ['admin', 'reseller'] },
  dnc_lists: { read: ['admin', 'reseller', 'merchant'], write: ['admin', 'reseller'] },
  // A reseller's documents the agent answers from: resellers keep them, merchants read and search them.
  knowledge: { read: ['admin', 'reseller', 'merchant'], write: ['admin', 'reseller'] },
  // Subject access and erasure of a person's data, each inside the caller's scope; retention is a reseller's setting.
  privacy: { read: ['admin', 'reseller', 'merchant'], write: ['admin', 'reseller', 'merchant'] },
  leads: { read: ALL, write: ALL },
  // Users push leads into campaigns; pausing, resuming and stopping one is for those who run them.
  campaigns: { read: ALL, write: ['admin', 'reseller', 'merchant'] },
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

/**
 * The roles of s2s tokens a role may issue: an admin any issuable role anywhere, a reseller any of
 * them inside its reseller, a merchant merchant and user tokens for its own merchant, a user none.
 */
export function issuableTokenRoles(role: RoleName): readonly RoleName[] {
  if (!can(role, 'tokens', 'write')) return [];
  return role === 'merchant' ? ['merchant', 'user'] : ['reseller', 'merchant', 'user'];
}

/** The roles of users a role may create: only an admin creates admins; a reseller the others, inside its reseller. */
export function creatableUserRoles(role: RoleName): readonly RoleName[] {
  if (!can(role, 'users', 'write')) return [];
  return role === 'admin' ? ['admin', 'reseller', 'merchant', 'user'] : ['reseller', 'merchant', 'user'];
}

/** Every cell of the matrix for one role: what GET /me reports, so clients offer only what the role may do. */
export function permissionsOf(role: RoleName): Record<Resource, Record<Action, boolean>> {
  const out = {} as Record<Resource, Record<Action, boolean>>;
  for (const resource of Object.keys(PERMISSIONS) as Resource[]) out[resource] = { read: can(role, resource, 'read'), write: can(role, resource, 'write') };
  return out;
}
