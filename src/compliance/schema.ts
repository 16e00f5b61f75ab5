/**
 * Terminology
 * - consent: the evidence, pushed with a lead, that the callee agreed to be called: where it was
 *   given (source), when (captured_at), what they agreed to (text) and a reference to the record
 *   (a form id, an IP address, a recording). An opt-out in a call revokes it (revoked_at).
 * - do-not-call list (DNC list): a named set of numbers a reseller (or, platform-wide, an admin)
 *   keeps, with the source it came from and its version; a configuration names the lists it honours.
 */
import { Type, type Static } from 'typebox';
import { Id, NullableTimestamp, Timestamp } from '../http/index.js';

/** How far ahead of the server's clock a consent's captured_at may be (clocks differ a little). */
export const CONSENT_CLOCK_SKEW_MS = 5 * 60_000;

export const Consent = Type.Object(
  {
    source: Type.String({ minLength: 1, maxLength: 200, description: 'Where consent was given: web_form, ivr, paper, crm, ...' }),
    captured_at: Type.String({ format: 'date-time', description: 'When consent was given (ISO 8601); not in the future' }),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 5000, description: 'The words the person agreed to' })),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'The record that proves it: a form submission id, an IP address, a recording URL' })),
  },
  {
    additionalProperties: false,
    description: "An extension: the evidence of the callee's consent, kept with the lead; required when the configuration has require_consent",
  },
);
export type Consent = Static<typeof Consent>;

/**
 * A lead's consent as GET /leads/{id} shows it: as pushed, revoked_at once the callee opted out,
 * and erased_at once its person was erased (the text and reference are gone then).
 */
export const StoredConsent = Type.Object(
  {
    ...Consent.properties,
    revoked_at: Type.Optional(Type.String({ description: 'When an opt-out revoked it' })),
    revoked_by: Type.Optional(Type.String()),
    erased_at: Type.Optional(Type.String({ description: 'When its person was erased (POST /privacy/erasure): text and reference removed' })),
  },
  { additionalProperties: false },
);

export const DncList = Type.Object({
  id: Type.String(),
  reseller_id: Type.Union([Type.String(), Type.Null()], { description: 'null: a platform-wide list' }),
  name: Type.String(),
  source: Type.Union([Type.String(), Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()]),
  number_count: Type.Integer(),
  imported_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type DncListView = Static<typeof DncList>;

export const CreateDncListBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    source: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Where the list comes from, e.g. "FTC National DNC Registry"' })),
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The version of the source, e.g. a release date' })),
    reseller_id: Type.Optional(
      Type.Union([Id, Type.Null()], { description: "Resellers: their own (the default). Admins: a reseller's, or omitted or null for a platform-wide list" }),
    ),
  },
  { additionalProperties: false, examples: [{ name: 'US national DNC', source: 'FTC National Do Not Call Registry', version: '2025-01-15' }] },
);
export type CreateDncListBody = Static<typeof CreateDncListBody>;

export const ImportQuery = Type.Object({
  version: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "The list's version after this import" })),
  mode: Type.Optional(
    Type.Union([Type.Literal('append'), Type.Literal('replace')], { default: 'append', description: 'replace: the list holds only the numbers of this file afterwards' }),
  ),
});

export const LineError = Type.Object({ line: Type.Integer(), value: Type.String(), message: Type.String() });
export type LineError = Static<typeof LineError>;

/** How many malformed lines an import names; the count covers them all. */
export const REPORTED_LINE_ERRORS = 1000;

export const ImportResult = Type.Object({
  list_id: Type.String(),
  version: Type.Union([Type.String(), Type.Null()]),
  lines: Type.Integer({ description: 'Lines read (a header line included)' }),
  imported: Type.Integer({ description: 'Numbers newly added' }),
  already_listed: Type.Integer({ description: 'Valid numbers that were on the list already (or twice in the file)' }),
  malformed: Type.Integer({ description: 'Lines that hold no valid E.164 number: not imported' }),
  errors: Type.Array(LineError, { description: `The first ${REPORTED_LINE_ERRORS} malformed lines, with their line numbers (1-based)` }),
  number_count: Type.Integer({ description: 'Numbers on the list after the import' }),
});
export type ImportResult = Static<typeof ImportResult>;

export const Lookup = Type.Object({
  list_id: Type.String(),
  phone_number: Type.String(),
  listed: Type.Boolean(),
});
