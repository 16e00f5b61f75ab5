/**
 * Terminology
 * - principal: who is calling, as established from a bearer token (a user's login JWT or an s2s token).
 * - role: admin > reseller > merchant > user; it decides what the principal may do (permissions.ts).
 * - scope: the reseller (and merchant) the principal's data lives in; it decides what it may see (scope.ts).
 */
export const ROLES = ['admin', 'reseller', 'merchant', 'user'] as const;
export type RoleName = (typeof ROLES)[number];

export interface Principal {
  kind: 'user' | 's2s';
  /** User ID or s2s token record ID. */
  id: string;
  /** The user's email, or the token's name; for logs and audit. */
  label: string;
  role: RoleName;
  resellerId: string | null;
  merchantId: string | null;
}

/** A part of Dialer acting on its own behalf (the sandbox line, demo data): an admin in no tenant's scope. */
export function systemPrincipal(id: string, label: string): Principal {
  return { kind: 'user', id, label, role: 'admin', resellerId: null, merchantId: null };
}
