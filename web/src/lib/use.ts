import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError } from '../api/client.js';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | Error | undefined;
  loading: boolean;
  reload(): void;
  /** Takes `data` as the latest answer without asking again (the server's answer to a write, say). */
  replace(data: T): void;
}

/** Runs `load` when `deps` change (and on reload()); the latest answer wins. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, loading: false }),
      (error: Error) => !ctl.signal.aborted && error.name !== 'AbortError' && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => ctl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const replace = useCallback((data: T) => setState({ data, loading: false }), []);
  return { data: state.data, error: state.error, loading: state.loading, reload, replace };
}

/** Calls `fn` every `ms` while the page is visible. */
export function useInterval(fn: () => void, ms: number, deps: unknown[] = []): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') saved.current();
    }, ms);
    return () => clearInterval(timer);
  }, [ms, ...deps]);
}

/**
 * A screen's filters kept in the address's query string, so a filtered view can be linked to and
 * survives a reload: the current values, and a setter that replaces them (empty values are left out).
 */
export function useQueryFilters<K extends string>(): [Partial<Record<K, string>>, (next: Partial<Record<K, string>>) => void] {
  const { query, path, route } = useLocation();
  const set = (next: Partial<Record<K, string>>) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(next)) if (v) params.set(k, v as string);
    route(`${path}${params.size ? `?${params}` : ''}`, true);
  };
  return [query as Partial<Record<K, string>>, set];
}
