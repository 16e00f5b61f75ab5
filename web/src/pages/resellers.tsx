/** Resellers: the top of the tenancy; admins create them. */
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { tenants } from '../api/endpoints.js';
import type { Reseller } from '../api/types.js';
import { ErrorNote, Field, toast } from '../components/ui.js';
import { ListPage } from '../components/list-page.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { can } from '../session.js';

export default function ResellersPage() {
  const list = useLoad((signal) => tenants.resellers(signal), []);
  const [error, setError] = useState<ApiError | Error>();
  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setError(undefined);
    try {
      await tenants.createReseller(String(new FormData(form).get('name')).trim());
      toast('Reseller created.');
      form.reset();
      list.reload();
    } catch (err) {
      setError(err as Error);
    }
  };
  return (
    <ListPage<Reseller>
      title="Resellers"
      subtitle="Each reseller has its own merchants, templates, configurations, leads and blacklist."
      before={
        can('resellers', 'write') && (
          <section class="card">
            <form class="toolbar" onSubmit={create}>
              <Field label="New reseller" class="grow" error={error instanceof ApiError ? error.at('/name') : undefined}>
                <input name="name" required placeholder="Name" />
              </Field>
              <button type="submit" class="primary">
                Create
              </button>
            </form>
            {!(error instanceof ApiError && error.at('/name')) && <ErrorNote error={error} />}
          </section>
        )
      }
      list={list}
      caption="Resellers"
      rowKey={(r) => r.id}
      empty="No resellers yet."
      columns={[
        { key: 'name', label: 'Name', render: (r) => r.name },
        { key: 'id', label: 'Id', render: (r) => <code>{r.id}</code> },
        { key: 'created', label: 'Created', render: (r) => when(r.created_at) },
      ]}
    />
  );
}
