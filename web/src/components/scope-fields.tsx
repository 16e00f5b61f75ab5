/** Choosing a reseller and a merchant inside the caller's scope (fixed to its own when it has one). */
import { useState } from 'preact/hooks';
import { tenants } from '../api/endpoints.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';
import { Field } from './ui.js';
import { NamedSelect } from './list-page.js';

export function ScopeFields({ needsMerchant, resellerId, onReseller, errorAt, merchantId }: { needsMerchant: boolean; resellerId: string; onReseller: (id: string) => void; errorAt: (p: string) => string | undefined; merchantId?: string | null }) {
  const me = session.get()!.me;
  const [merchant, setMerchant] = useState(merchantId ?? '');
  const resellers = useLoad((signal) => (me.role === 'admin' ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const merchants = useLoad((signal) => (can('merchants', 'read') ? tenants.merchants(signal) : Promise.resolve(undefined)), []);
  return (
    <>
      {me.role === 'admin' ? (
        <Field label="Reseller" error={errorAt('/reseller_id')}>
          <NamedSelect name="reseller_id" required none="Choose…" items={resellers.data?.data} value={resellerId} onChange={onReseller} />
        </Field>
      ) : (
        <input type="hidden" name="reseller_id" value={me.reseller_id ?? ''} />
      )}
      {needsMerchant &&
        (me.role === 'merchant' || me.role === 'user' ? (
          <input type="hidden" name="merchant_id" value={me.merchant_id ?? ''} />
        ) : (
          <Field label="Merchant" error={errorAt('/merchant_id')}>
            <NamedSelect name="merchant_id" required none="Choose…" items={merchants.data?.data.filter((m) => m.reseller_id === (resellerId || me.reseller_id))} value={merchant} onChange={setMerchant} />
          </Field>
        ))}
    </>
  );
}
