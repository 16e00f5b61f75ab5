/** Choosing a reseller and a merchant inside the caller's scope (fixed to its own when it has one). */
import { useState } from 'preact/hooks';
import { tenants } from '../api/endpoints.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';
import { Field } from './ui.js';

export function ScopeFields({ needsMerchant, resellerId, onReseller, errorAt, merchantId }: { needsMerchant: boolean; resellerId: string; onReseller: (id: string) => void; errorAt: (p: string) => string | undefined; merchantId?: string | null }) {
  const me = session.get()!.me;
  const [merchant, setMerchant] = useState(merchantId ?? '');
  const resellers = useLoad((signal) => (me.role === 'admin' ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const merchants = useLoad((signal) => (can('merchants', 'read') ? tenants.merchants(signal) : Promise.resolve(undefined)), []);
  return (
    <>
      {me.role === 'admin' ? (
        <Field label="Reseller" error={errorAt('/reseller_id')}>
          <select name="reseller_id" required value={resellerId} onChange={(e) => onReseller(e.currentTarget.value)}>
            <option value="">Choose…</option>
            {resellers.data?.data.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
        </Field>
      ) : (
        <input type="hidden" name="reseller_id" value={me.reseller_id ?? ''} />
      )}
      {needsMerchant &&
        (me.role === 'merchant' || me.role === 'user' ? (
          <input type="hidden" name="merchant_id" value={me.merchant_id ?? ''} />
        ) : (
          <Field label="Merchant" error={errorAt('/merchant_id')}>
            <select name="merchant_id" required value={merchant} onChange={(e) => setMerchant(e.currentTarget.value)}>
              <option value="">Choose…</option>
              {merchants.data?.data
                .filter((m) => m.reseller_id === (resellerId || me.reseller_id))
                .map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                  </option>
                ))}
            </select>
          </Field>
        ))}
    </>
  );
}
