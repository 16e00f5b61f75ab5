import { Type, type Static } from 'typebox';
import { Id, NullableTimestamp, Timestamp } from '../http/index.js';

const Phone = Type.String({ minLength: 1, maxLength: 32, description: 'E.164, for example +14155550123' });

export const ErasureBody = Type.Object(
  {
    phone_number: Type.Optional(Phone),
    lead_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A lead of the person: every lead of its number is erased' })),
    reseller_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "An admin's choice of one reseller; others act on their own scope, and naming another reseller is refused" })),
  },
  { additionalProperties: false, examples: [{ phone_number: '+14155550123' }] },
);
export type ErasureBody = Static<typeof ErasureBody>;

export const ErasedLeadReport = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'Its status after the erasure: a lead that was waiting is finished (aborted, "erased on request")' }),
  outcome: Type.Union([Type.String(), Type.Null()], { description: 'Kept: analytics count the lead as before' }),
  payload_fields: Type.Array(Type.String(), { description: 'Payload fields removed (customer_mobile_number is replaced by the hash)' }),
  metadata_fields: Type.Array(Type.String(), { description: 'metaData fields removed: the transcript (transcription), the analysis, what the callee said or keyed' }),
  transcript: Type.Boolean({ description: 'A transcript was removed' }),
  analysis: Type.Boolean({ description: 'A post-call analysis was removed' }),
  consent_evidence: Type.Boolean({ description: "The consent's text and reference were removed (its source and times are kept)" }),
  recordings: Type.Array(Type.String(), { description: 'Call ids whose recording files were deleted (local storage and the bucket)' }),
  aborted: Type.Boolean({ description: 'It was waiting to be called and is not called now' }),
});

export const ErasureResult = Type.Object({
  id: Type.String({ description: 'The erasure, as the audit trail names it' }),
  erased_at: Timestamp,
  phone_number_hash: Type.Union([Type.String(), Type.Null()], { description: 'What the number is kept as: its one-way hash (null: the lead had no number)' }),
  leads: Type.Array(ErasedLeadReport),
  opt_outs_hashed: Type.Integer({ description: 'Blacklist entries of the number now kept as its hash, so that a later push is still refused' }),
  webhook_deliveries: Type.Integer({ description: 'Webhook payloads (sent or queued) stripped of the transcript, analysis and recording link' }),
  live_transcript_lines: Type.Integer(),
});
export type ErasureResult = Static<typeof ErasureResult>;
export type ErasedLeadReport = Static<typeof ErasedLeadReport>;

export const ExportQuery = Type.Object({ phone_number: Phone }, { additionalProperties: false });

const ExportAttempt = Type.Object({
  attempt: Type.Integer(),
  status: Type.String(),
  outcome: Type.Union([Type.String(), Type.Null()]),
  call_id: Type.Union([Type.String(), Type.Null()]),
  provider: Type.Union([Type.String(), Type.Null()]),
  started_at: Timestamp,
  ended_at: NullableTimestamp,
  duration_seconds: Type.Union([Type.Integer(), Type.Null()]),
});

export const ExportDocument = Type.Object({
  phone_number: Type.String(),
  generated_at: Timestamp,
  leads: Type.Array(
    Type.Object({
      lead: Type.Object({}, { additionalProperties: true, description: 'The lead as GET /leads/{id} shows it: payload, consent, metaData (transcription, analysis), recording_url' }),
      attempts: Type.Array(ExportAttempt),
    }),
  ),
  blacklist: Type.Array(
    Type.Object({ reseller_id: Type.Union([Type.String(), Type.Null()]), lead_id: Type.Union([Type.String(), Type.Null()]), reason: Type.Union([Type.String(), Type.Null()]), created_at: Timestamp }),
  ),
  dnc_lists: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), source: Type.Union([Type.String(), Type.Null()]), version: Type.Union([Type.String(), Type.Null()]) }), {
    description: 'The do-not-call lists in scope that hold the number',
  }),
});
export type ExportDocument = Static<typeof ExportDocument>;

const Days = Type.Union([Type.Integer({ minimum: 1, maximum: 36_500 }), Type.Null()]);
export const RetentionQuery = Type.Object({ reseller_id: Type.Optional(Id) }, { additionalProperties: false });
export const RetentionBody = Type.Object(
  {
    reseller_id: Type.Optional(Id),
    recordings_days: Days,
    transcripts_days: Days,
  },
  { additionalProperties: false, examples: [{ recordings_days: 90, transcripts_days: 365 }] },
);
export type RetentionBody = Static<typeof RetentionBody>;
export const Retention = Type.Object({
  reseller_id: Type.String(),
  recordings_days: Type.Union([Type.Integer(), Type.Null()], { description: 'Recordings of calls that ended more than this many days ago are deleted; null: kept' }),
  transcripts_days: Type.Union([Type.Integer(), Type.Null()], { description: 'Transcripts likewise; null: kept' }),
  updated_at: NullableTimestamp,
});
export type Retention = Static<typeof Retention>;
