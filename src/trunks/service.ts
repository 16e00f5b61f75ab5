/**
 * SIP trunks: a reseller's own carriers. Admins manage every reseller's; a reseller its own. The
 * address is checked by the outbound policy when written (a host that is a refused literal
 * address) and again when dialled (what a name resolves to). The password is write-only.
 */
import { lookup } from 'node:dns/promises';
import type { Principal } from '../auth/index.js';
import { assertOwnerInScope, inScope, scopeCondition } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { badRequest, conflict, isForeignKeyViolation, isUniqueViolation, notFound, type FieldError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { takeFailover } from './admission.js';
import {
  configurationsUsing,
  deleteTrunk,
  ensureSandboxTrunk,
  insertTrunk,
  selectTrunk,
  selectTrunkFailures,
  selectTrunks,
  trunkOfLead,
  trunksAtLiteral,
  trunksByName,
  updateTrunk,
  type TrunkFailureRow,
  type TrunkFields,
  type TrunkRow,
} from './repository.js';

/** The name of the sandbox line's trunk in a reseller. */
export const SANDBOX_TRUNK_NAME = 'Sandbox line';

/** Transports the SIP driver carries. */
export const IMPLEMENTED_TRANSPORTS = ['udp', 'tcp', 'tls'] as const;

export interface TrunkInput {
  reseller_id: string;
  name: string;
  address: string;
  transport: 'udp' | 'tcp' | 'tls';
  username?: string | null;
  password?: string | null;
  from_domain?: string | null;
  codecs: Array<'PCMU' | 'PCMA'>;
  max_channels?: number | null;
  max_calls_per_second?: number | null;
  failover_trunk_id?: string | null;
  transfer_method?: 'refer' | 'bridge';
}

/** How long what a trunk's host name resolves to is trusted, for knowing its calls that come in. */
const RESOLVED_TTL_MS = 60_000;

function hostOf(address: string): string {
  return address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
}

function portOf(address: string): number {
  const port = /\]?:(\d+)$/.exec(address)?.[1];
  return port ? Number(port) : 5060;
}

const ADDRESS = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/;

export class TrunksService {
  /** A host name's IPv4 addresses, as last resolved. */
  private readonly resolved = new Map<string, { addresses: string[]; at: number }>();

  constructor(private readonly db: Db, private readonly policy: OutboundPolicy) {}

  private check(input: TrunkInput, previous?: TrunkRow): void {
    const errors: FieldError[] = [];
    const match = ADDRESS.exec(input.address);
    if (!match || (match[1] !== undefined && (Number(match[1]) < 1 || Number(match[1]) > 65535))) {
      errors.push({ path: '/address', message: 'must be a host or host:port (port 1-65535), e.g. sip.carrier.example:5060' });
    } else {
      const host = input.address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
      const why = this.policy.hostRefusal(host);
      if (why) errors.push({ path: '/address', message: why });
    }
    if (!(IMPLEMENTED_TRANSPORTS as readonly string[]).includes(input.transport)) {
      errors.push({ path: '/transport', message: `${input.transport} is not carried yet; use ${IMPLEMENTED_TRANSPORTS.join(', ')}` });
    }
    if (new Set(input.codecs).size !== input.codecs.length) errors.push({ path: '/codecs', message: 'must not repeat a codec' });
    const password = input.password === undefined ? previous?.password : input.password;
    if ((input.username ? 1 : 0) + (password ? 1 : 0) === 1) errors.push({ path: input.username ? '/password' : '/username', message: 'username and password go together' });
    if (errors.length) throw badRequest(`The trunk is not valid: ${errors.map((e) => `${e.path.slice(1)} ${e.message}`).join('; ')}`, errors, 'invalid_trunk');
  }

  private fields(input: TrunkInput, previous?: TrunkRow): TrunkFields {
    return {
      reseller_id: input.reseller_id,
      name: input.name,
      address: input.address,
      transport: input.transport,
      username: input.username ?? null,
      // The password is never shown, so an update that leaves it out keeps it.
      password: input.password === undefined ? (previous?.password ?? null) : input.password,
      from_domain: input.from_domain ?? null,
      codecs: input.codecs,
      max_channels: input.max_channels ?? null,
      max_calls_per_second: input.max_calls_per_second ?? null,
      failover_trunk_id: input.failover_trunk_id ?? null,
      transfer_method: input.transfer_method ?? 'refer',
    };
  }

  private async checkFailover(principal: Principal, input: TrunkInput, selfId?: string): Promise<void> {
    if (!input.failover_trunk_id) return;
    if (input.failover_trunk_id === selfId) throw badRequest('failover_trunk_id must name another trunk', [{ path: '/failover_trunk_id', message: 'must not be the trunk itself' }]);
    const other = await selectTrunk(this.db, input.failover_trunk_id);
    if (!other || !inScope(principal, other.reseller_id, null) || other.reseller_id !== input.reseller_id) {
      throw badRequest(`failover_trunk_id ${input.failover_trunk_id} is not a trunk of reseller ${input.reseller_id}`, [{ path: '/failover_trunk_id', message: 'must be a trunk of the same reseller' }]);
    }
    // A real call must never reach the simulated customer (nor go out with its caller ID).
    if (other.sandbox) throw badRequest('failover_trunk_id must not be the sandbox line\'s trunk', [{ path: '/failover_trunk_id', message: 'must not be the sandbox line\'s trunk' }]);
  }

  private async write<T>(input: TrunkInput, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`Reseller ${input.reseller_id} already has a trunk named ${input.name}`, 'duplicate_trunk');
      if (isForeignKeyViolation(err)) throw badRequest(`reseller_id ${input.reseller_id} does not exist`, [{ path: '/reseller_id', message: 'must be an existing reseller' }]);
      throw err;
    }
  }

  async create(principal: Principal, input: TrunkInput): Promise<TrunkRow> {
    assertOwnerInScope(principal, input.reseller_id, undefined);
    this.check(input);
    await this.checkFailover(principal, input);
    return this.write(input, () => insertTrunk(this.db, newId(), this.fields(input)));
  }

  async get(principal: Principal, id: string): Promise<TrunkRow> {
    const row = await selectTrunk(this.db, id);
    if (!row || !inScope(principal, row.reseller_id, null)) throw notFound(`Trunk ${id}`);
    return row;
  }

  async list(principal: Principal, resellerId: string | undefined, limit: number, offset: number): Promise<{ rows: TrunkRow[]; total: number }> {
    const params: unknown[] = [];
    let where = scopeCondition(principal, { reseller: 'reseller_id' }, params);
    if (resellerId) {
      params.push(resellerId);
      where += ` AND reseller_id = $${params.length}`;
    }
    return selectTrunks(this.db, where, params, limit, offset);
  }

  /** The sandbox line's trunk belongs to the service: the API reads it and never changes it. */
  private static untouchable(row: TrunkRow): void {
    if (row.sandbox) throw conflict(`Trunk ${row.id} is the sandbox line's: its far side is the simulated customer inside Dialer, and it cannot be changed or deleted`, 'sandbox_trunk');
  }

  async replace(principal: Principal, id: string, input: TrunkInput): Promise<TrunkRow> {
    const previous = await this.get(principal, id);
    TrunksService.untouchable(previous);
    assertOwnerInScope(principal, input.reseller_id, undefined);
    this.check(input, previous);
    await this.checkFailover(principal, input, id);
    const row = await this.write(input, () => updateTrunk(this.db, id, this.fields(input, previous)));
    if (!row) throw notFound(`Trunk ${id}`);
    return row;
  }

  async delete(principal: Principal, id: string): Promise<TrunkRow> {
    const row = await this.get(principal, id);
    TrunksService.untouchable(row);
    const using = await configurationsUsing(this.db, id);
    if (using > 0) throw conflict(`Trunk ${id} is the trunk of ${using} configuration(s); point them elsewhere first`, 'trunk_in_use');
    await deleteTrunk(this.db, id);
    return row;
  }

  /** The trunk's recent failures (refused INVITEs, and refusals before a failover), newest first. */
  async failures(principal: Principal, id: string, limit: number): Promise<TrunkFailureRow[]> {
    await this.get(principal, id);
    return selectTrunkFailures(this.db, id, limit);
  }

  /**
   * The sandbox line's trunk of a reseller, made the first time by the sandbox (not a tenant's: its
   * address is the far side inside each Dialer process, which the outbound policy does not judge).
   */
  async ensureSandbox(resellerId: string): Promise<TrunkRow> {
    const row = await ensureSandboxTrunk(this.db, newId(), resellerId, SANDBOX_TRUNK_NAME);
    if (!row) throw conflict(`Reseller ${resellerId} already has a trunk named ${SANDBOX_TRUNK_NAME}; rename it to call the sandbox line over SIP`, 'duplicate_trunk');
    return row;
  }

  /** The trunk a lead's call goes through, with its address checked against what its name resolves to now. */
  async forLead(leadId: string): Promise<TrunkRow | undefined> {
    const trunk = await trunkOfLead(this.db, leadId);
    return trunk && this.reachable(trunk);
  }

  /**
   * Trunk `fromTrunkId` failed a lead's live call (the carrier's fault): its failover trunk, with a
   * channel taken for the call, or undefined (none, or it is full or paced).
   */
  async failoverFor(lead: { id: string; attempt: number }, fromTrunkId: string): Promise<TrunkRow | undefined> {
    const id = await this.db.tx((q) => takeFailover(q, lead, fromTrunkId));
    const trunk = id ? await selectTrunk(this.db, id) : undefined;
    return trunk && this.reachable(trunk);
  }

  /**
   * The trunk a SIP request from `host`:`port` came through: among the trunks at that address (an
   * address literal, else a name that resolves to it), the one whose port is `port`, else the
   * oldest. Undefined when the address is no trunk's.
   */
  async at(host: string, port: number): Promise<TrunkRow | undefined> {
    let candidates = await trunksAtLiteral(this.db, host);
    if (candidates.length === 0) {
      const named = await trunksByName(this.db);
      const hits = await Promise.all(named.map(async (t) => (await this.addressesOf(hostOf(t.address))).includes(host)));
      candidates = named.filter((_t, i) => hits[i]);
    }
    return candidates.find((t) => portOf(t.address) === port) ?? candidates[0];
  }

  private async addressesOf(name: string): Promise<string[]> {
    const known = this.resolved.get(name);
    if (known && Date.now() - known.at < RESOLVED_TTL_MS) return known.addresses;
    const addresses = await lookup(name, { family: 4, all: true }).then(
      (found) => found.map((a) => a.address),
      () => [],
    );
    this.resolved.set(name, { addresses, at: Date.now() });
    return addresses;
  }

  private async reachable(trunk: TrunkRow): Promise<TrunkRow> {
    // The sandbox line's far side is this process's own: no tenant's address to judge.
    if (trunk.sandbox) return trunk;
    const host = trunk.address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    if (!this.policy.hostAllowed(host)) {
      const { address } = await lookup(host, { family: 4 });
      const why = this.policy.addressRefusal(address);
      if (why) throw new Error(`trunk ${trunk.id}'s address ${host} resolves to ${why}, which Dialer does not call (DIALER_OUTBOUND_ALLOW)`);
    }
    return trunk;
  }
}
