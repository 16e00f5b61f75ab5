import type { Queryable } from '../db/index.js';
import { ConfigurationsRepository, type InboundSettings } from './repository.js';

export type InboundConfiguration = InboundSettings & {
  /** The id of our number that was called. */
  number_id: string;
};

/**
 * The configuration that answers a call to our number `ourNumber` from `caller`: the one of the
 * last lead we called that person from that number (a call back); failing that, the most recently
 * changed configuration with `enable_inbound`. Undefined when none would; `unknown_number` when
 * `ourNumber` is not one of ours. `within` narrows both: the number must be of that provider, the
 * configuration of that reseller (a SIP trunk's call: its SIP numbers, its reseller's configurations).
 */
export async function findInboundConfiguration(
  db: Queryable,
  ourNumber: string,
  caller: string,
  within: { provider?: string | undefined; resellerId?: string | undefined } = {},
): Promise<InboundConfiguration | undefined | 'unknown_number'> {
  const repo = new ConfigurationsRepository(db);
  const numberId = await repo.numberIdByPhone(ourNumber, within.provider);
  if (!numberId) return 'unknown_number';
  const settings = (await repo.inboundOfCallBack(numberId, caller, within.resellerId)) ?? (await repo.latestInbound(within.resellerId));
  return settings && { ...settings, number_id: numberId };
}
