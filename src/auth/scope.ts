import { forbidden } from '../lib/errors.js';
import type { Principal } from './principal.js';
import type { Queryable } from '../db/index.js';

/**
 * Scope rules, in one place. Admin sees everything; a reseller its reseller; a merchant or user its
 * merchant. `resellerWide`: rows with no merchant (reseller-level templates) are visible to the
 * merchants of that reseller too.
 */
export interface ScopeColumns {
  reseller: string;
  merchant?: string;
}

/** SQL condition limiting rows to the principal's scope; appends its values to `params`. */
export function scopeCondition(
  principal: Principal,
  columns: ScopeColumns,
  params: unknown[],
  options: { resellerWide?: boolean } = {},
): string {
  if (principal.role === 'admin') return 'TRUE';
  params.push(principal.resellerId);
  const resellerCond = `${columns.reseller} = $${params.length}`;
  if (principal.role === 'reseller' || !columns.merchant) return resellerCond;
  params.push(principal.merchantId);
  const merchantCond = options.resellerWide
    ? `(${columns.merchant} = $${params.length} OR ${columns.merchant} IS NULL)`
    : `${columns.merchant} = $${params.length}`;
  return `${resellerCond} AND ${merchantCond}`;
}

/** Whether a row owned by (resellerId, merchantId) is visible to the principal. */
export function inScope(
  principal: Principal,
  resellerId: string,
  merchantId: string | null,
  options: { resellerWide?: boolean } = {},
): boolean {
  if (principal.role === 'admin') return true;
  if (principal.resellerId !== resellerId) return false;
  if (principal.role === 'reseller') return true;
  if (merchantId === null) return options.resellerWide === true;
  return principal.merchantId === merchantId;
}

/**
 * Checks that the principal may create or change something owned by (resellerId, merchantId):
 * 403 when the requested owner lies outside its scope.
 */
export function assertOwnerInScope(principal: Principal, resellerId: string, merchantId: string | null | undefined): void {
  if (principal.role === 'admin') return;
  if (principal.resellerId !== resellerId) {
    throw forbidden(`reseller_id ${resellerId} is outside the scope of this token`, 'out_of_scope');
  }
  if (principal.role === 'reseller') return;
  if (merchantId !== principal.merchantId) {
    throw forbidden(
      merchantId ? `merchant_id ${merchantId} is outside the scope of this token` : 'merchant_id is required for this token',
      'out_of_scope',
    );
  }
}

/** Whether a reseller of this id exists (an owner a write names must). */
export async function resellerExists(q: Queryable, id: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM resellers WHERE id = $1', [id]);
  return rows.length > 0;
}

/** The reseller a merchant belongs to, or undefined for an unknown merchant. */
export async function merchantReseller(q: Queryable, id: string): Promise<string | undefined> {
  const { rows } = await q.query<{ reseller_id: string }>('SELECT reseller_id FROM merchants WHERE id = $1', [id]);
  return rows[0]?.reseller_id;
}
