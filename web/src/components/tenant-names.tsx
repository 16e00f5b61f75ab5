/** Resellers and merchants by name where the API gives ids (the caller's own lists; an id it cannot read stays a short id). */
import { tenants } from '../api/endpoints.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';

export function useTenantNames() {
  const admin = session.get()?.me.role === 'admin';
  const resellers = useLoad((signal) => (admin ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const merchants = useLoad((signal) => (can('merchants', 'read') ? tenants.merchants(signal) : Promise.resolve(undefined)), []);
  const named = (list: { id: string; name: string }[] | undefined, id: string | null | undefined) => {
    if (!id) return '—';
    const name = list?.find((x) => x.id === id)?.name;
    return name ? <span title={id}>{name}</span> : <code title={id}>{id.slice(0, 8)}</code>;
  };
  return {
    reseller: (id: string | null | undefined) => named(resellers.data?.data, id),
    merchant: (id: string | null | undefined) => named(merchants.data?.data, id),
  };
}
