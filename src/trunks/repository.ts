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
  /** Live calls holding the trunk now (read with the row; not a column). */
  channels_in_use?: number;
  created_at: Date;
  updated_at: Date;
}

export type TrunkFields = Omit<TrunkRow, 'id' | 'created_at' | 'updated_at' | 'channels_in_use'>;

const READ = `*, ${trunkLiveSql('sip_trunks')} AS channels_in_use`;

const COLUMNS = ['reseller_id', 'name', 'address', 'transport', 'username', 'password', 'from_domain', 'codecs', 'max_channels', 'max_calls_per_second', 'failover_trunk_id', 'transfer_method'] as const;

/** numeric comes back as text from pg: one shape for both drivers. */
function row(r: TrunkRow): TrunkRow {
  return { ...r, max_calls_per_second: r.max_calls_per_second === null ? null : Number(r.max_calls_per_second) };
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
  const { rows } = await q.query<TrunkRow>(`SELECT ${READ} FROM sip_trunks WHERE address !~ '^[0-9.]+(:[0-9]+)?$' AND address NOT LIKE '[%' ORDER BY created_at, id`);
  return rows.map(row);
}
