import { Batcher } from '../lib/batcher.js';
import { newId } from '../lib/ids.js';
import { forbidden, notFound, unauthorized, unprocessable } from '../lib/errors.js';
import { verifyPassword } from './passwords.js';
import type { Principal, RoleName } from './principal.js';
import type { AuthRepository, TokenRow, UserRow } from './repository.js';
import { scopeCondition } from './scope.js';
import { issuableTokenRoles } from './permissions.js';
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle, type LoginThrottleSettings } from './throttle.js';
import { hashS2sToken, newS2sToken, S2S_PREFIX, type JwtSigner } from './tokens.js';

export interface LoginResult {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  user: { id: string; email: string; role: RoleName; reseller_id: string | null; merchant_id: string | null };
}

export interface IssueTokenInput {
  name: string;
  role: string;
  reseller_id: string;
  merchant_id?: string | null;
}

/** Who a user or an s2s token acts as. */
function principalOf(kind: Principal['kind'], row: UserRow | TokenRow, label: string): Principal {
  return { kind, id: row.id, label, role: row.role, resellerId: row.reseller_id, merchantId: row.merchant_id };
}

const ISSUABLE: readonly RoleName[] = ['reseller', 'merchant', 'user'];

export class AuthService {
  /**
   * The user (or s2s token) behind each bearer token is read afresh for every request (a deleted
   * user, a changed role or a revoked token takes effect at once), but the requests arriving while
   * one read is under way share the next one: one query per round trip, not per request.
   */
  private readonly users: Batcher<string, UserRow | undefined>;
  private readonly s2sTokens: Batcher<string, TokenRow | undefined>;
  private readonly touchedAtMs = new Map<string, number>();

  readonly throttle: LoginThrottle;

  constructor(
    private readonly repo: AuthRepository,
    private readonly signer: JwtSigner,
    throttle: LoginThrottleSettings = DEFAULT_LOGIN_THROTTLE,
  ) {
    this.throttle = new LoginThrottle(repo, throttle);
    this.users = new Batcher(async (ids) => {
      const found = new Map((await repo.usersByIds([...new Set(ids)])).map((u) => [u.id, u]));
      return ids.map((id) => found.get(id));
    });
    this.s2sTokens = new Batcher(async (hashes) => {
      const found = new Map((await repo.liveTokensByHashes([...new Set(hashes)])).map(({ token_hash, ...row }) => [token_hash, row]));
      return hashes.map((hash) => found.get(hash));
    });
  }

  /** `address`: the client's address, for the throttle (see throttle.ts). */
  async login(email: string, password: string, address: string): Promise<LoginResult> {
    const user = await this.throttle.attempt(email, address, async () => {
      const found = await this.repo.userByEmail(email);
      const ok = await verifyPassword(found?.password_hash, password);
      return found && ok ? found : undefined;
    });
    if (!user) throw unprocessable('The email or password is incorrect', undefined, 'invalid_credentials');
    return {
      access_token: await this.signer.sign(user.id),
      token_type: 'bearer',
      expires_in: this.signer.ttlSeconds,
      user: { id: user.id, email: user.email, role: user.role, reseller_id: user.reseller_id, merchant_id: user.merchant_id },
    };
  }

  async authenticate(token: string): Promise<Principal> {
    if (token.startsWith(S2S_PREFIX)) {
      const row = await this.s2sTokens.submit(hashS2sToken(token));
      if (!row) throw unauthorized('The server-to-server token is unknown or has been revoked');
      // At most one write a minute per token (the row just read, or this process, says when it
      // was last noted).
      const lastUsedMs = Math.max(row.last_used_at ? new Date(row.last_used_at).getTime() : 0, this.touchedAtMs.get(row.id) ?? 0);
      if (Date.now() - lastUsedMs > 60_000) {
        if (this.touchedAtMs.size >= 10_000) this.touchedAtMs.clear();
        this.touchedAtMs.set(row.id, Date.now());
        await this.repo.touchToken(row.id);
      }
      return principalOf('s2s', row, row.name);
    }
    const { userId, issuedAtMs } = await this.signer.verify(token);
    const user = await this.users.submit(userId);
    if (!user) throw unauthorized('The user of this token no longer exists');
    if (user.sessions_since && issuedAtMs < new Date(user.sessions_since).getTime()) throw unauthorized('The password of this user was reset; log in again');
    return principalOf('user', user, user.email);
  }

  /**
   * Issues an s2s token. Who may issue what: admin any role at any reseller; a
   * reseller reseller/merchant/user tokens inside its reseller; a merchant merchant/user tokens for
   * its own merchant; a user none.
   */
  async issueToken(caller: Principal, input: IssueTokenInput): Promise<TokenRow & { token: string }> {
    const role = input.role as RoleName;
    if (!ISSUABLE.includes(role)) {
      throw forbidden(`Tokens can be issued for the roles ${ISSUABLE.join(', ')} only`, 'role_not_issuable');
    }
    const merchantId = input.merchant_id ?? null;
    if ((role === 'merchant' || role === 'user') && !merchantId) {
      throw unprocessable(`merchant_id is required for a ${role} token`, [{ path: '/merchant_id', message: 'is required' }]);
    }
    if (role === 'reseller' && merchantId) {
      throw unprocessable('A reseller token has no merchant_id', [{ path: '/merchant_id', message: 'must be omitted for role reseller' }]);
    }
    this.assertMayIssue(caller, role, input.reseller_id, merchantId);
    if (!(await this.repo.resellerExists(input.reseller_id))) {
      throw unprocessable(`reseller_id ${input.reseller_id} is unknown`, [{ path: '/reseller_id', message: 'is unknown' }]);
    }
    if (merchantId) {
      const owner = await this.repo.merchantReseller(merchantId);
      if (owner !== input.reseller_id) {
        throw unprocessable(`merchant_id ${merchantId} is not a merchant of reseller ${input.reseller_id}`, [
          { path: '/merchant_id', message: 'is unknown for this reseller' },
        ]);
      }
    }
    const token = newS2sToken();
    const row = await this.repo.insertToken({
      id: newId(),
      token_hash: hashS2sToken(token),
      token_hint: token.slice(0, S2S_PREFIX.length + 6),
      name: input.name,
      role: role as TokenRow['role'],
      reseller_id: input.reseller_id,
      merchant_id: merchantId,
      created_by: `${caller.kind}:${caller.id}`,
    });
    return { ...row, token };
  }

  private assertMayIssue(caller: Principal, role: RoleName, resellerId: string, merchantId: string | null): void {
    if (caller.role === 'admin') return;
    const refuse = () => {
      throw forbidden(`A ${caller.role} cannot issue a ${role} token at this scope`, 'scope_not_grantable');
    };
    if (!issuableTokenRoles(caller.role).includes(role) || caller.resellerId !== resellerId) refuse();
    if (caller.role === 'merchant' && merchantId !== caller.merchantId) refuse();
  }

  listTokens(caller: Principal, limit: number, offset: number) {
    const params: unknown[] = [];
    const where = scopeCondition(caller, { reseller: 't.reseller_id', merchant: 't.merchant_id' }, params);
    return this.repo.listTokens(where, params, limit, offset);
  }

  async revokeToken(caller: Principal, id: string): Promise<TokenRow> {
    const row = await this.repo.tokenById(id);
    const visible =
      row &&
      (caller.role === 'admin' ||
        (caller.resellerId === row.reseller_id && (caller.role === 'reseller' || caller.merchantId === row.merchant_id)));
    if (!row || !visible) throw notFound(`Token ${id}`);
    return (await this.repo.revokeToken(id))!;
  }
}
