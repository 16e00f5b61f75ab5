/**
 * A two-reseller world for tenancy tests: resellers R1 and R2; merchants M1 and M1b under R1, M2
 * under R2; an s2s token for each role and scope. Built through the public API.
 */
import assert from 'node:assert/strict';
import type { Client, TestApp } from './app.js';

export interface Scope {
  resellerId: string;
  merchantId: string;
}

export interface World {
  r1: string;
  r2: string;
  m1: string;
  m1b: string;
  m2: string;
  /** Clients by role and scope. */
  reseller1: Client;
  reseller2: Client;
  merchant1: Client;
  merchant1b: Client;
  merchant2: Client;
  user1: Client;
  user2: Client;
}

export async function issueToken(admin: Client, body: { role: string; reseller_id: string; merchant_id?: string; name?: string }): Promise<string> {
  const res = await admin.post('/s2s-token', { name: body.name ?? `${body.role} token`, ...body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.token as string;
}

export async function buildWorld(t: TestApp): Promise<World> {
  const reseller = async (name: string) => {
    const res = await t.admin.post('/resellers', { name });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const merchant = async (resellerId: string, name: string) => {
    const res = await t.admin.post('/merchants', { name, reseller_id: resellerId, contact_email: `${name.toLowerCase()}@example.com` });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const r1 = await reseller('Reseller One');
  const r2 = await reseller('Reseller Two');
  const m1 = await merchant(r1, 'MerchantOne');
  const m1b = await merchant(r1, 'MerchantOneB');
  const m2 = await merchant(r2, 'MerchantTwo');
  const tok = (role: string, reseller_id: string, merchant_id?: string) => issueToken(t.admin, { role, reseller_id, merchant_id }).then(t.as);
  return {
    r1,
    r2,
    m1,
    m1b,
    m2,
    reseller1: await tok('reseller', r1),
    reseller2: await tok('reseller', r2),
    merchant1: await tok('merchant', r1, m1),
    merchant1b: await tok('merchant', r1, m1b),
    merchant2: await tok('merchant', r2, m2),
    user1: await tok('user', r1, m1),
    user2: await tok('user', r2, m2),
  };
}
