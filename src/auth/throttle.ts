/**
 * Login throttling: failed logins are counted per account and per client address in the database
 * (every process sees the same count; it survives a restart). Past the allowance, each further
 * attempt waits twice as long as the one before (capped), answered 429 with Retry-After. An
 * attempt is counted before the password is checked, so parallel guesses cannot all slip in; a
 * success resets the account and takes back the address's count for it. A wrong password and an
 * unknown email do the same work. docs/security.md describes it for operators.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../lib/errors.js';
import { DEFAULT_LOGIN_THROTTLE, type LoginThrottleSettings } from '../config/security.js';
import type { AuthRepository } from './repository.js';

export { DEFAULT_LOGIN_THROTTLE, type LoginThrottleSettings };

const key = (kind: 'account' | 'address', value: string) => createHash('sha256').update(`${kind}:${value}`).digest('hex');

export class LoginThrottle {
  constructor(
    private readonly repo: AuthRepository,
    private readonly settings: LoginThrottleSettings = DEFAULT_LOGIN_THROTTLE,
  ) {}

  /**
   * Runs one login attempt under the throttle: `check` says whether the credentials are right.
   * Throws 429 when the account or the address must wait.
   */
  async attempt<T>(email: string, address: string, check: () => Promise<T | undefined>): Promise<T | undefined> {
    const s = this.settings;
    const account = key('account', email.trim().toLowerCase());
    const client = key('address', address);
    const charged = await this.repo.chargeLoginAttempt(
      [
        { key: account, allowed: s.accountFailures },
        { key: client, allowed: s.addressFailures },
      ],
      s,
    );
    if (charged.length < 2) {
      const wait = await this.repo.loginBlockedSeconds([account, client]);
      throw new AppError(429, 'login_throttled', `Too many failed logins; try again in ${Math.max(1, wait)} s`, undefined, { retryAfterSeconds: Math.max(1, wait) });
    }
    const result = await check();
    if (result !== undefined) await this.repo.loginSucceeded(account, client, s.addressFailures);
    return result;
  }

  prune(): Promise<number> {
    return this.repo.pruneLoginFailures(this.settings.forgetSeconds);
  }
}
