/** Waiting on a lead through the API, as a client of Dialer would. */
import assert from 'node:assert/strict';
import type { Client } from './app.js';

/** The lead once its call is over (FINISHED, or RETRY for a later attempt); fails after `timeoutMs`. */
export async function settledLead(client: Pick<Client, 'get'>, leadId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lead = (await client.get(`/leads/${leadId}`)).body;
    if (lead.status === 'FINISHED' || lead.status === 'RETRY') return lead;
    assert.ok(Date.now() < deadline, `lead ${leadId} still ${lead.status}: ${JSON.stringify(lead.metaData ?? {})}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
