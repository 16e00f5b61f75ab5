/**
 * A lead's compliance: the consent it was pushed with (and its revocation or erasure), the
 * do-not-call list that stopped it, the calling hours of law that held it, the disclosure its last
 * call opened with (and whether the callee heard it whole), and its erasure.
 */
import type { Lead } from '../api/types.js';
import { when } from '../lib/format.js';
import { Badge, Card } from './ui.js';

type Consent = NonNullable<Lead['consent']>;

export function ComplianceCard({ lead: l }: { lead: Lead }) {
  const m = (l.metaData ?? {}) as Record<string, unknown>;
  const dnc = m.dnc_list as { id: string; name: string; checked_at: string } | undefined;
  const hold = m.legal_hours_hold as { jurisdiction: string; hours: string; until: string } | undefined;
  const disclosure = m.disclosure as { text: string; language?: string; completed: boolean; error?: string } | undefined;
  const erased = typeof m.erased_at === 'string' ? m.erased_at : undefined;
  const c: Consent | null | undefined = l.consent;
  return (
    <Card title="Compliance" id="compliance">
      <dl class="kv">
        <dt>Consent</dt>
        <dd id="lead-consent">
          {c ? (
            <>
              {c.source}, given {when(c.captured_at)} {c.revoked_at ? <Badge value={`revoked ${when(c.revoked_at)}`} tone="bad" /> : <Badge value="valid" tone="ok" />}
              {c.text && <blockquote class="consent-text">“{c.text}”</blockquote>}
              {c.reference && <div class="muted">Reference: {c.reference}</div>}
              {c.erased_at && <div class="muted">Text and reference erased {when(c.erased_at)}</div>}
            </>
          ) : (
            'none recorded'
          )}
        </dd>
        {dnc && (
          <>
            <dt>Do-not-call list</dt>
            <dd>
              Stopped by <strong>{dnc.name}</strong> at {when(dnc.checked_at)}
            </dd>
          </>
        )}
        {hold && (
          <>
            <dt>Calling hours of law</dt>
            <dd>
              {hold.jurisdiction} {hold.hours}: waits until {when(hold.until)}
            </dd>
          </>
        )}
        {disclosure && (
          <>
            <dt>Disclosure</dt>
            <dd id="lead-disclosure">
              {disclosure.completed ? <Badge value="played in full" tone="ok" /> : <Badge value="not finished: the call ended during it" tone="bad" />}
              {disclosure.language && <span class="muted"> ({disclosure.language})</span>}
              <blockquote class="consent-text">“{disclosure.text}”</blockquote>
              {disclosure.error && <div class="muted">{disclosure.error}</div>}
            </dd>
          </>
        )}
        {erased && (
          <>
            <dt>Erased</dt>
            <dd>{when(erased)}: payload, transcript, analysis and recording removed on request</dd>
          </>
        )}
      </dl>
    </Card>
  );
}
