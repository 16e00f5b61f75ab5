/** SQL of SIP trunks. */
import type { Queryable } from '../db/index.js';
import { trunkLiveSql } from '../lifecycle/index.js';

export interface TrunkRow {
  id: string;
  reseller_id: string;
  name: string;
  address: string;
  transport: 'udp' | 'tcp' | 'tls';
  username: string | null;
  password: string | null;
  from_domain: string | null;
  codecs: Array<'PCMU' | 'PCMA'>;
  max_channels: number | null;
  max_calls_per_second: number | null;
  failover_trunk_id: string | null;
  transfer_method: 'refer' | 'bridge';
  /** The sandbox line's trunk: its far side is the simulated customer inside each process (its address is not dialled). */
  sandbox: boolean;
  /** Live calls holding the trunk now (read with the row; not a column). */
  channels_in_use?: number;
  /** Calls started through the trunk per second over the last RATE_WINDOW_SECONDS (read with the row; not a column). */
  calls_per_second?: number;
  created_at: Date;
  updated_at: Date;
}

export type TrunkFields = Omit<TrunkRow, 'id' | 'created_at' | 'updated_at' | 'channels_in_use' | 'calls_per_second' | 'sandbox'>;

/** The window over which a trunk's calls per second are counted. */
export const RATE_WINDOW_SECONDS = 10;

/** Calls started in the window through trunk `t`: the leads whose last call it took (one start per lead in so short a window). */
const rateSql = (t: string) =>
  `(SELECT count(*)::int FROM leads r WHERE r.trunk_id = ${t}.id AND r.call_initiated_time > now() - make_interval(secs => ${RATE_WINDOW_SECONDS}))`;

const READ = `*, ${trunkLiveSql('sip_trunks')} AS channels_in_use, ${rateSql('sip_trunks')} AS calls_started`;

const COLUMNS = ['reseller_id', 'name', 'address', 'transport', 'username', 'password', 'from_domain', 'codecs', 'max_channels', 'max_calls_per_second', 'failover_trunk_id', 'transfer_method'] as const;

/** numeric comes back as text from pg: one shape for both drivers. */
function row({ calls_started, ...r }: TrunkRow & { calls_started?: number }): TrunkRow {
  return {
    ...r,
    max_calls_per_second: r.max_calls_per_second === null ? null : Number(r.max_calls_per_second),
    ...(calls_started !== undefined ? { calls_per_second: Math.round((calls_started / RATE_WINDOW_SECONDS) * 100) / 100 } : {}),
  };
}

export async function insertTrunk(q: Queryable, id: string, f: TrunkFields): Promise<TrunkRow> {
  const { rows } = await q.query<TrunkRow>(
    `INSERT INTO sip_trunks (id, ${COLUMNS.join(', ')}) VALUES ($1, ${COLUMNS.map((_c, i) => `$${i + 2}`).join(', ')}) RETURNING ${READ}`,
    [id, ...COLUMNS.map((c) => f[c])],
  );
  return row(rows[0]!);
}

export async function updateTrunk(q: Queryable, id: string, f: TrunkFields): Promise<TrunkRow | undefined> {
  const { rows } = await q.query<TrunkRow>(
    `UPDATE sip_trunks SET ${COLUMNS.map((c, i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1 RETURNING ${READ}`,
    [id, ...COLUMNS.map((c) => f[c])],
  );
  return rows[0] && row(rows[0]);
}

export async function selectTrunk(q: Queryable, id: string): Promise<TrunkRow | undefined> {
  const { rows } = await q.query<TrunkRow>(`SELECT ${READ} FROM sip_trunks WHERE id = $1`, [id]);
  return rows[0] && row(rows[0]);
}

export async function selectTrunks(q: Queryable, where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: TrunkRow[]; total: number }> {
  const { rows } = await q.query<TrunkRow & { total: string }>(
    `SELECT ${READ}, count(*) OVER () AS total FROM sip_trunks WHERE ${where} ORDER BY name, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return { rows: rows.map(({ total: _t, ...r }) => row(r)), total: rows[0] ? Number(rows[0].total) : 0 };
}

export async function deleteTrunk(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM sip_trunks WHERE id = $1', [id]);
}

/** Configurations that dial through the trunk (it cannot be deleted while they do). */
export async function configurationsUsing(q: Queryable, id: string): Promise<number> {
  const { rows } = await q.query<{ n: string }>('SELECT count(*) AS n FROM configurations WHERE trunk_id = $1', [id]);
  return Number(rows[0]!.n);
}

/**
 * The trunk a lead's call goes through: the one its claim chose (its configuration's, or that
 * one's failover when it was full), else its configuration's (by the lead's template).
 */
export async function trunkOfLead(q: Queryable, leadId: string): Promise<TrunkRow | undefined> {
  const { rows } = await q.query<TrunkRow>(
    `SELECT t.* FROM leads l LEFT JOIN configurations c ON c.template_id = l.template_id AND c.reseller_id = l.reseller_id
     JOIN sip_trunks t ON t.id = coalesce(l.trunk_id, c.trunk_id)
     WHERE l.id = $1 LIMIT 1`,
    [leadId],
  );
  return rows[0] && row(rows[0]);
}

/** Trunks whose address is the IPv4 literal `host`, with or without a port (oldest first). */
export async function trunksAtLiteral(q: Queryable, host: string): Promise<TrunkRow[]> {
  const { rows } = await q.query<TrunkRow>(`SELECT ${READ} FROM sip_trunks WHERE address = $1 OR address LIKE $2 ORDER BY created_at, id`, [host, `${host}:%`]);
  return rows.map(row);
}

/** Trunks whose address is a host name (resolved by the caller; oldest first). */
export async function trunksByName(q: Queryable): Promise<TrunkRow[]> {
  const { rows } = await q.query<TrunkRow>(`SELECT ${READ} FROM sip_trunks WHERE NOT sandbox AND address !~ '^[0-9.]+(:[0-9]+)?$' AND address NOT LIKE '[%' ORDER BY created_at, id`);
  return rows.map(row);
}

/**
 * The sandbox line's trunk of a reseller, made the first time. Its calls go to the far side inside
 * each process; the stored address (a reserved name that never resolves) is never dialled, and no
 * call coming in from anywhere matches it.
 */
export async function ensureSandboxTrunk(q: Queryable, id: string, resellerId: string, name: string): Promise<TrunkRow | undefined> {
  await q.query(
    `INSERT INTO sip_trunks (id, reseller_id, name, address, transport, codecs, sandbox)
     VALUES ($1, $2, $3, 'sandbox.invalid', 'udp', ARRAY['PCMU', 'PCMA'], true)
     ON CONFLICT DO NOTHING`,
    [id, resellerId, name],
  );
  const { rows } = await q.query<TrunkRow>(`SELECT ${READ} FROM sip_trunks WHERE reseller_id = $1 AND sandbox`, [resellerId]);
  return rows[0] && row(rows[0]);
}

/** One failed attempt through a trunk: its INVITE's final status, or its refusal before a failover. */
export interface TrunkFailureRow {
  lead_id: string;
  attempt: number;
  started_at: Date;
  ended_at: Date | null;
  outcome: string | null;
  sip_status: number;
  reason: string | null;
  sip_statuses: number[] | null;
  /** The trunk that took the call after this one refused it (a failover), else null. */
  failed_over_to: string | null;
}

/**
 * The trunk's recent failures, newest first: attempts that ended on it with a refused INVITE
 * (`sip_status`), and attempts it refused before its failover trunk took them (`sip_failover`).
 */
export async function selectTrunkFailures(q: Queryable, trunkId: string, limit: number): Promise<TrunkFailureRow[]> {
  const { rows } = await q.query<TrunkFailureRow>(
    `SELECT * FROM (
       (SELECT a.lead_id, a.attempt, a.started_at, a.ended_at, a.outcome, (a.meta_data->>'sip_status')::int AS sip_status,
               a.error AS reason, a.meta_data->'sip_statuses' AS sip_statuses, NULL::text AS failed_over_to
        FROM call_attempts a
        WHERE a.meta_data->>'sip_trunk_id' = $1 AND a.meta_data ? 'sip_status'
        ORDER BY a.started_at DESC LIMIT $2)
       UNION ALL
       (SELECT a.lead_id, a.attempt, a.started_at, a.ended_at, a.outcome, (f->>'status')::int, f->>'reason', NULL, a.meta_data->>'sip_trunk_id'
        FROM call_attempts a CROSS JOIN LATERAL jsonb_array_elements(a.meta_data->'sip_failover') AS f
        WHERE a.meta_data ? 'sip_failover' AND a.meta_data->'sip_failover' @> jsonb_build_array(jsonb_build_object('trunk_id', $1::text))
          AND f->>'trunk_id' = $1
        ORDER BY a.started_at DESC LIMIT $2)
     ) x ORDER BY started_at DESC, lead_id LIMIT $2`,
    [trunkId, limit],
  );
  return rows;
}
