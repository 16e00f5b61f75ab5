import { randomBytes } from 'node:crypto';
import { assertOwnerInScope, creatableUserRoles, hashPassword, inScope, scopeCondition, type Principal, type RoleName } from '../auth/index.js';
import { badRequest, conflict, forbidden, isUniqueViolation, notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { MerchantRow, ResellerRow, TenantsRepository, UserRecord } from './repository.js';

export interface NewUser {
  email: string;
  password: string;
  role: RoleName;
  reseller_id?: string | null;
  merchant_id?: string | null;
}

export type UserChange = Omit<NewUser, 'password'>;

export class TenantsService {
  constructor(private readonly repo: TenantsRepository) {}

  // Resellers

  async createReseller(name: string): Promise<ResellerRow> {
    try {
      return await this.repo.insertReseller(newId(), name);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A reseller named "${name}" already exists`, 'duplicate_reseller');
      throw err;
    }
  }

  /**
   * The reseller named `name` (in any case), created when there is none: the tenant a tool works in
   * (the sandbox line's, the demo data's). Two callers at once end with the same one.
   */
  async ensureReseller(name: string): Promise<ResellerRow> {
    const found = await this.repo.resellerByName(name);
    if (found) return found;
    try {
      return await this.repo.insertReseller(newId(), name);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    return (await this.repo.resellerByName(name))!;
  }

  /** The reseller's merchant named `name` (in any case), created with `contactEmail` when there is none. */
  async ensureMerchant(resellerId: string, name: string, contactEmail: string): Promise<MerchantRow> {
    const found = await this.repo.merchantByName(resellerId, name);
    if (found) return found;
    try {
      return await this.repo.insertMerchant({ id: newId(), reseller_id: resellerId, name, contact_email: contactEmail });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    return (await this.repo.merchantByName(resellerId, name))!;
  }

  listResellers(caller: Principal, limit: number, offset: number) {
    const params: unknown[] = [];
    const where = scopeCondition(caller, { reseller: 'id' }, params);
    return this.repo.listResellers(where, params, limit, offset);
  }

  async getReseller(caller: Principal, id: string): Promise<ResellerRow> {
    const row = await this.repo.reseller(id);
    if (!row || !inScope(caller, row.id, null, { resellerWide: true })) throw notFound(`Reseller ${id}`);
    return row;
  }

  // Merchants

  async createMerchant(caller: Principal, input: { name: string; reseller_id: string; contact_email: string }): Promise<MerchantRow> {
    assertOwnerInScope(caller, input.reseller_id, caller.role === 'reseller' || caller.role === 'admin' ? undefined : caller.merchantId);
    if (!(await this.repo.reseller(input.reseller_id))) {
      throw badRequest(`reseller_id ${input.reseller_id} is unknown`, [{ path: '/reseller_id', message: 'is unknown' }]);
    }
    try {
      return await this.repo.insertMerchant({ id: newId(), ...input });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A merchant named "${input.name}" already exists in this reseller`, 'duplicate_merchant');
      throw err;
    }
  }

  listMerchants(caller: Principal, filter: { reseller_id?: string }, limit: number, offset: number) {
    const params: unknown[] = [];
    const conds = [scopeCondition(caller, { reseller: 'm.reseller_id', merchant: 'm.id' }, params)];
    if (filter.reseller_id) {
      params.push(filter.reseller_id);
      conds.push(`m.reseller_id = $${params.length}`);
    }
    return this.repo.listMerchants(conds.join(' AND '), params, limit, offset);
  }

  async getMerchant(caller: Principal, id: string): Promise<MerchantRow> {
    const row = await this.repo.merchant(id);
    if (!row || !inScope(caller, row.reseller_id, row.id)) throw notFound(`Merchant ${id}`);
    return row;
  }

  async updateMerchant(
    caller: Principal,
    id: string,
    bodyId: string | undefined,
    input: { name: string; contact_email: string; reseller_id?: string },
  ): Promise<MerchantRow> {
    if (bodyId !== undefined && bodyId !== id) {
      throw badRequest(`Body id ${bodyId} does not match the path id ${id}`, [{ path: '/id', message: 'must equal the id in the path' }]);
    }
    const current = await this.getMerchant(caller, id);
    if (input.reseller_id !== undefined && input.reseller_id !== current.reseller_id) {
      throw badRequest('A merchant cannot move to another reseller', [{ path: '/reseller_id', message: 'cannot be changed' }]);
    }
    try {
      return (await this.repo.updateMerchant(id, input.name, input.contact_email))!;
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A merchant named "${input.name}" already exists in this reseller`, 'duplicate_merchant');
      throw err;
    }
  }

  async deleteMerchant(caller: Principal, id: string): Promise<MerchantRow> {
    const current = await this.getMerchant(caller, id);
    const refs = await this.repo.merchantReferences(id);
    const inUse = Object.entries(refs).filter(([, n]) => n > 0);
    if (inUse.length > 0) {
      throw conflict(
        `Merchant ${id} is still referenced by ${inUse.map(([k, n]) => `${n} ${k}`).join(', ')}; remove those first`,
        'merchant_in_use',
      );
    }
    await this.repo.deleteMerchant(id);
    return current;
  }

  // Users

  async createUser(caller: Principal, input: NewUser): Promise<UserRecord> {
    if (!creatableUserRoles(caller.role).includes(input.role)) throw forbidden(input.role === 'admin' ? 'Only an admin can create admins' : `A ${caller.role} cannot create ${input.role} users`);
    const place = await this.placement(caller, input);
    try {
      return await this.repo.insertUser({ id: newId(), email: input.email, password_hash: await hashPassword(input.password), role: input.role, ...place });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A user with email ${input.email} already exists`, 'duplicate_user');
      throw err;
    }
  }

  /**
   * Changes a user's email, role and place. The caller must be able to create users of both the
   * old and the new role; nobody changes their own role, and the last admin stays an admin.
   */
  async updateUser(caller: Principal, id: string, input: UserChange): Promise<UserRecord> {
    const current = await this.managedUser(caller, id);
    if (!creatableUserRoles(caller.role).includes(input.role)) throw forbidden(input.role === 'admin' ? 'Only an admin can make a user an admin' : `A ${caller.role} cannot give the role ${input.role}`);
    if (current.id === caller.id && input.role !== current.role) throw conflict('You cannot change your own role', 'self_role');
    if (current.role === 'admin' && input.role !== 'admin' && (await this.repo.adminCount()) <= 1) throw conflict('The last admin must stay an admin', 'last_admin');
    const place = await this.placement(caller, input);
    try {
      return (await this.repo.updateUser(id, { email: input.email, role: input.role, ...place }))!;
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A user with email ${input.email} already exists`, 'duplicate_user');
      throw err;
    }
  }

  /** Sets a new password for a user the caller manages; the user's sessions opened before it end. */
  async resetPassword(caller: Principal, id: string, password: string): Promise<UserRecord> {
    await this.managedUser(caller, id);
    return (await this.repo.setPassword(id, await hashPassword(password)))!;
  }

  /** A user the caller may see (404 otherwise) and manage: one of a role it may create, or itself (403 otherwise). */
  private async managedUser(caller: Principal, id: string): Promise<UserRecord> {
    const row = await this.visibleUser(caller, id);
    if (row.id !== caller.id && !creatableUserRoles(caller.role).includes(row.role)) throw forbidden(`A ${caller.role} cannot change ${row.role} users`);
    return row;
  }

  private async visibleUser(caller: Principal, id: string): Promise<UserRecord> {
    const row = await this.repo.user(id);
    const visible = row && (caller.role === 'admin' || (row.reseller_id !== null && inScope(caller, row.reseller_id, row.merchant_id)));
    if (!row || !visible) throw notFound(`User ${id}`);
    return row;
  }

  /** Where a user of `role` belongs: an admin nowhere, others in a known reseller in the caller's scope, merchants and users in one of its merchants. */
  private async placement(caller: Principal, input: { role: RoleName; reseller_id?: string | null; merchant_id?: string | null }) {
    const resellerId = input.role === 'admin' ? null : (input.reseller_id ?? null);
    const merchantId = input.role === 'merchant' || input.role === 'user' ? (input.merchant_id ?? null) : null;
    if (input.role !== 'admin') {
      if (!resellerId) throw badRequest(`reseller_id is required for a ${input.role}`, [{ path: '/reseller_id', message: 'is required' }]);
      assertOwnerInScope(caller, resellerId, caller.role === 'admin' || caller.role === 'reseller' ? undefined : merchantId);
      if (!(await this.repo.reseller(resellerId))) {
        throw badRequest(`reseller_id ${resellerId} is unknown`, [{ path: '/reseller_id', message: 'is unknown' }]);
      }
    }
    if (input.role === 'merchant' || input.role === 'user') {
      if (!merchantId) throw badRequest(`merchant_id is required for a ${input.role}`, [{ path: '/merchant_id', message: 'is required' }]);
      const merchant = await this.repo.merchant(merchantId);
      if (!merchant || merchant.reseller_id !== resellerId) {
        throw badRequest(`merchant_id ${merchantId} is not a merchant of reseller ${resellerId}`, [
          { path: '/merchant_id', message: 'is unknown for this reseller' },
        ]);
      }
    }
    return { reseller_id: resellerId, merchant_id: merchantId };
  }

  listUsers(caller: Principal, limit: number, offset: number) {
    const params: unknown[] = [];
    const where = scopeCondition(caller, { reseller: 'u.reseller_id', merchant: 'u.merchant_id' }, params);
    return this.repo.listUsers(where, params, limit, offset);
  }

  async deleteUser(caller: Principal, id: string): Promise<UserRecord> {
    const row = await this.visibleUser(caller, id);
    if (row.id === caller.id) throw conflict('You cannot delete your own user', 'self_delete');
    if (row.role === 'admin' && (await this.repo.adminCount()) <= 1) throw conflict('The last admin cannot be deleted', 'last_admin');
    await this.repo.deleteUser(id);
    return row;
  }

  /**
   * Makes sure an admin exists. Returns the generated password when one had
   * to be invented, so the CLI can print it once; undefined otherwise.
   */
  async ensureAdmin(email: string | undefined, password: string | undefined): Promise<{ email: string; generatedPassword?: string } | undefined> {
    if ((await this.repo.adminCount()) > 0) return undefined;
    const adminEmail = email ?? 'admin@localhost';
    const generated = password === undefined ? randomBytes(12).toString('base64url') : undefined;
    try {
      await this.repo.insertUser({
        id: newId(),
        email: adminEmail,
        password_hash: await hashPassword(password ?? generated!),
        role: 'admin',
        reseller_id: null,
        merchant_id: null,
      });
    } catch (err) {
      // Another process created it at the same moment: fine.
      if (isUniqueViolation(err)) return undefined;
      throw err;
    }
    return generated ? { email: adminEmail, generatedPassword: generated } : { email: adminEmail };
  }
}
