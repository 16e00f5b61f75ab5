/** How the dashboard writes numbers, times and durations (the viewer's locale and time zone). */

export const viewerTimeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const time = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return dateTime.format(new Date(iso));
}

const shortThisYear = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
const shortOtherYear = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

/** A time in a table cell: "Nov 25, 5:34 PM" this year, "Nov 25, 2025" before (the full time in its title). */
export function whenShort(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return (d.getFullYear() === new Date().getFullYear() ? shortThisYear : shortOtherYear).format(d);
}

export function clock(iso: string | null | undefined): string {
  if (!iso) return '—';
  return time.format(new Date(iso));
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 7 * 86400) return `${Math.floor(s / 86400)} d ago`;
  return new Date(iso).toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

/** An offset in a recording as m:ss (1:05). */
export function offset(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function seconds(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const s = Math.round(value);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${s % 60} s`;
}

/** "3 h 12 min" for a span in milliseconds. */
export function span(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h === 0) return `${m} min`;
  if (h < 48) return m ? `${h} h ${m} min` : `${h} h`;
  return `${Math.round(h / 24)} days`;
}

const integer = new Intl.NumberFormat();
export const count = (n: number | null | undefined) => (n === null || n === undefined ? '—' : integer.format(n));

export function percent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return '—';
  return `${(ratio * 100).toFixed(1)} %`;
}

export function money(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  return `$${n.toFixed(n < 1 && n > 0 ? 4 : 2)}`;
}

/** Midnight today in the viewer's zone, as an ISO date (the analytics `date_from` of "today"). */
export function isoDate(d: Date): string {
  const y = d.getFullYear();
  const m = String(d.getMonth() + 1).padStart(2, '0');
  const day = String(d.getDate()).padStart(2, '0');
  return `${y}-${m}-${day}`;
}

export function daysAgo(n: number): string {
  const d = new Date();
  d.setDate(d.getDate() - n);
  return isoDate(d);
}

/** A number as shown: an erased person's number is kept only as its one-way hash (`sha256:…`). */
export function shownNumber(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value.trim()) return undefined;
  return value.startsWith('sha256:') ? 'erased person' : value.trim();
}

/** Who a lead calls, for its title: the callee's name and number, as the payload has them; else its request id. */
export function callee(lead: { payload: unknown; request_id: string }): string {
  const p = lead.payload as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
  const name = text(p.customer_name) ?? text(p.name) ?? ([text(p.first_name), text(p.last_name)].filter(Boolean).join(' ') || undefined);
  const number = shownNumber(p.customer_mobile_number);
  return name && number ? `${name} · ${number}` : (name ?? number ?? lead.request_id);
}
