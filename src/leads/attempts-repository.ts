import type { Queryable } from '../db/index.js';

/** One attempt of a lead, from the `call_attempts` history, with the number it called from. */
export interface AttemptRow {
  attempt: number;
  status: string;
  outcome: string | null;
  error: string | null;
  call_id: string | null;
  provider: string | null;
  outbound_number_id: string | null;
  from_number: string | null;
  started_at: Date;
  ended_at: Date | null;
  duration_seconds: number | null;
  /** A call through a SIP trunk: its INVITE's final status (the refusal's, or the answer's), and the trunk. */
  sip_status: number | null;
  sip_trunk_id: string | null;
}

export class AttemptsRepository {
  constructor(private readonly db: Queryable) {}

  async ofLead(leadId: string): Promise<AttemptRow[]> {
    const { rows } = await this.db.query<AttemptRow>(
      `SELECT a.attempt, a.status, a.outcome, a.error, a.call_id, a.provider, a.outbound_number_id, n.phone_number AS from_number,
              a.started_at, a.ended_at, a.duration_seconds,
              coalesce((a.meta_data->>'sip_status')::int, ((a.meta_data->'sip_statuses')->>(-1))::int) AS sip_status, a.meta_data->>'sip_trunk_id' AS sip_trunk_id
       FROM call_attempts a LEFT JOIN outbound_numbers n ON n.id = a.outbound_number_id
       WHERE a.lead_id = $1 ORDER BY a.attempt`,
      [leadId],
    );
    return rows;
  }
}
