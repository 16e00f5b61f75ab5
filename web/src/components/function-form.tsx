/**
 * One function of a node in the flow editor: its name and description, where it leads (another
 * node, or a transfer; a warm one in warm-transfer-form.tsx), its parameters (name, type,
 * description, required) and its hooks (HTTP requests; headers, query and body are edited in the
 * JSON view). A built-in function has a name and a description only.
 */
import { BUILTIN_FUNCTIONS, HTTP_METHODS, JSON_TYPES } from '../../../src/voice/flow/schema.js';
import { freeName, type Json } from '../lib/flow-edit.js';
import { CommitInput, Group, Labelled, list, RemoveButton, str, type ProblemAt } from './flow-fields.js';
import { WarmTransferForm } from './warm-transfer-form.js';

type FunctionChange = (mutate: (fn: Json) => void, key?: string) => void;

interface Parameter {
  type?: unknown;
  description?: unknown;
}

const paramsOf = (fn: Json): Record<string, Parameter> => (fn.properties && typeof fn.properties === 'object' && !Array.isArray(fn.properties) ? (fn.properties as Record<string, Parameter>) : {});
const requiredOf = (fn: Json): string[] => (Array.isArray(fn.required) ? (fn.required as unknown[]).filter((r): r is string => typeof r === 'string') : []);

/** The parameters in their order, with one of them renamed (or dropped when `to` is undefined). */
function renameParam(fn: Json, from: string, to: string | undefined): void {
  const next: Record<string, Parameter> = {};
  for (const [k, v] of Object.entries(paramsOf(fn))) {
    if (k !== from) next[k] = v;
    else if (to !== undefined) next[to] = v;
  }
  fn.properties = next;
  const required = requiredOf(fn);
  if (required.includes(from)) fn.required = to === undefined ? required.filter((r) => r !== from) : required.map((r) => (r === from ? to : r));
}

export function FunctionForm({ fn, at, nodeNames, change, remove, problemAt }: { fn: Json; at: string; nodeNames: string[]; change: FunctionChange; remove: () => void; problemAt: ProblemAt }) {
  const name = str(fn.name);
  const builtin = fn.type === 'builtin';
  const params = Object.entries(paramsOf(fn));
  const required = requiredOf(fn);
  const hooks = list(fn.hooks);
  const target = str(fn.transition_to);
  return (
    <div class="flow-item function-form" data-function={name}>
      <div class="flow-item-head">
        <strong>
          ƒ {name || '(unnamed)'}
          {builtin ? ' · built-in' : ''}
        </strong>
        <RemoveButton label={`Remove the function ${name}`} onClick={remove} />
      </div>
      <div class="flow-fields">
        <Labelled label="Name" problem={problemAt(`${at}/name`) ?? problemAt(`${at}/type`) ?? problemAt(at)}>
          {builtin ? (
            <select name="function_name" value={name} onChange={(e) => change((f) => void (f.name = e.currentTarget.value))}>
              {BUILTIN_FUNCTIONS.map((b) => (
                <option key={b} value={b}>
                  {b}
                </option>
              ))}
            </select>
          ) : (
            <CommitInput name="function_name" value={name} onCommit={(v) => change((f) => void (f.name = v))} />
          )}
        </Labelled>
        <Labelled label="Description (what the LLM reads)" problem={problemAt(`${at}/description`)} wide>
          <input name="function_description" value={str(fn.description)} onInput={(e) => change((f) => void (f.description = e.currentTarget.value), `${at}/description`)} />
        </Labelled>
        {!builtin && (
          <>
            <Labelled label="Then go to" problem={problemAt(`${at}/transition_to`)}>
              <select
                name="transition_to"
                value={target}
                onChange={(e) =>
                  change((f) => {
                    if (e.currentTarget.value) f.transition_to = e.currentTarget.value;
                    else delete f.transition_to;
                  })
                }
              >
                <option value="">(stay in this node)</option>
                {target && !nodeNames.includes(target) && <option value={target}>{target} (missing)</option>}
                {nodeNames.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </Labelled>
            <Labelled label="Transfer the call to (E.164 or {variable})" problem={problemAt(`${at}/transfer_to_number`)}>
              <input
                name="transfer_to_number"
                value={str(fn.transfer_to_number)}
                placeholder="none"
                onInput={(e) =>
                  change((f) => {
                    if (e.currentTarget.value) f.transfer_to_number = e.currentTarget.value;
                    else delete f.transfer_to_number;
                  }, `${at}/transfer_to_number`)
                }
              />
            </Labelled>
          </>
        )}
      </div>
      {!builtin && (fn.transfer_to_number !== undefined || fn.warm_transfer !== undefined) && <WarmTransferForm fn={fn} at={at} change={change} problemAt={problemAt} />}
      {!builtin && (
        <Group
          title="Parameters"
          addLabel="Add a parameter"
          onAdd={() =>
            change((f) => {
              f.properties = { ...paramsOf(f), [freeName('value', Object.keys(paramsOf(f)))]: { type: 'string', description: '' } };
            })
          }
        >
          {params.length === 0 && <p class="muted small-text">No parameters: the LLM calls it with none.</p>}
          {params.map(([key, p]) => (
            <div class="param-row" key={key} data-parameter={key}>
              <Labelled label="Name" problem={problemAt(`${at}/properties/${key}`)}>
                <CommitInput name="parameter_name" value={key} onCommit={(v) => change((f) => renameParam(f, key, v))} />
              </Labelled>
              <Labelled label="Type" problem={problemAt(`${at}/properties/${key}/type`)}>
                <select name="parameter_type" value={typeof p.type === 'string' ? p.type : 'string'} onChange={(e) => change((f) => void (paramsOf(f)[key]!.type = e.currentTarget.value))}>
                  {JSON_TYPES.map((t) => (
                    <option key={t} value={t}>
                      {t}
                    </option>
                  ))}
                </select>
              </Labelled>
              <Labelled label="Description">
                <input name="parameter_description" value={str(p.description)} onInput={(e) => change((f) => void (paramsOf(f)[key]!.description = e.currentTarget.value), `${at}/properties/${key}/description`)} />
              </Labelled>
              <label class="field check">
                <input
                  type="checkbox"
                  name="parameter_required"
                  checked={required.includes(key)}
                  onChange={(e) => change((f) => void (f.required = e.currentTarget.checked ? [...requiredOf(f), key] : requiredOf(f).filter((r) => r !== key)))}
                />
                required
              </label>
              <RemoveButton label={`Remove the parameter ${key}`} onClick={() => change((f) => renameParam(f, key, undefined))} />
            </div>
          ))}
        </Group>
      )}
      {!builtin && (
        <Group
          title="Hooks"
          hint="HTTP requests sent when the function is called; headers, query and body are edited in the JSON view."
          addLabel="Add a hook"
          onAdd={() => change((f) => void (f.hooks = [...list(f.hooks), { name: freeName('hook', list(f.hooks).map((h) => str(h.name))), http_request: { url: 'https://example.com/hook', method: 'POST' } }]))}
        >
          {hooks.map((h, i) => {
            const req = (h.http_request && typeof h.http_request === 'object' ? h.http_request : {}) as Json;
            const hookAt = `${at}/hooks/${i}`;
            const edit = (mutate: (r: Json) => void, key?: string) =>
              change((f) => {
                const hook = list(f.hooks)[i]!;
                const r = (hook.http_request && typeof hook.http_request === 'object' ? hook.http_request : {}) as Json;
                mutate(r);
                hook.http_request = r;
              }, key);
            return (
              <div class="hook-row" key={i} data-hook={str(h.name)}>
                <Labelled label="Name" problem={problemAt(`${hookAt}/name`)}>
                  <input name="hook_name" value={str(h.name)} onInput={(e) => change((f) => void (list(f.hooks)[i]!.name = e.currentTarget.value), `${hookAt}/name`)} />
                </Labelled>
                <Labelled label="Method" problem={problemAt(`${hookAt}/http_request/method`)}>
                  <select name="hook_method" value={str(req.method) || 'POST'} onChange={(e) => edit((r) => void (r.method = e.currentTarget.value))}>
                    {HTTP_METHODS.map((m) => (
                      <option key={m}>{m}</option>
                    ))}
                  </select>
                </Labelled>
                <Labelled label="URL" problem={problemAt(`${hookAt}/http_request/url`) ?? problemAt(`${hookAt}/http_request`)}>
                  <input name="hook_url" value={str(req.url)} onInput={(e) => edit((r) => void (r.url = e.currentTarget.value), `${hookAt}/url`)} />
                </Labelled>
                <Labelled label="Timeout (s)" problem={problemAt(`${hookAt}/http_request/timeout`)}>
                  <input
                    name="hook_timeout"
                    type="number"
                    min="0"
                    step="any"
                    value={typeof req.timeout === 'number' ? String(req.timeout) : ''}
                    placeholder="default"
                    onInput={(e) =>
                      edit((r) => {
                        const v = e.currentTarget.value;
                        if (v === '') delete r.timeout;
                        else r.timeout = Number(v);
                      }, `${hookAt}/timeout`)
                    }
                  />
                </Labelled>
                <RemoveButton label={`Remove the hook ${str(h.name)}`} onClick={() => change((f) => void (f.hooks = list(f.hooks).filter((_, j) => j !== i)))} />
              </div>
            );
          })}
        </Group>
      )}
    </div>
  );
}
