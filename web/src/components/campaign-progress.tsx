/** A campaign's progress as one bar: finished, in progress and queued, in proportion to its total. */
import type { Campaign } from '../api/campaigns.js';
import { Badge } from './ui.js';
import { count } from '../lib/format.js';

type Progress = Campaign['progress'];

export function ProgressBar({ progress, label }: { progress: Progress | undefined; label: string }) {
  if (!progress) return <span class="muted">…</span>;
  const { total, finished, in_progress, queued } = progress;
  const share = (n: number) => (total === 0 ? 0 : (n / total) * 100);
  const done = total === 0 ? 0 : Math.round((finished / total) * 100);
  return (
    <div class="campaign-progress">
      <div class="campaign-bar" role="img" aria-label={`${label}: ${finished} of ${total} finished, ${in_progress} in progress, ${queued} queued`}>
        <span class="seg seg-finished" style={{ width: `${share(finished)}%` }} />
        <span class="seg seg-live" style={{ width: `${share(in_progress)}%` }} />
      </div>
      <div class="campaign-bar-legend">
        {total === 0 ? (
          <span class="muted">no leads yet</span>
        ) : (
          <>
            <span>
              <i class="dot dot-finished" />
              {count(finished)} finished
            </span>
            <span>
              <i class="dot dot-live" />
              {count(in_progress)} in progress
            </span>
            <span>
              <i class="dot dot-queued" />
              {count(queued)} queued
            </span>
            <span class="muted">{done} %</span>
          </>
        )}
      </div>
    </div>
  );
}

const TONE: Record<Campaign['status'], string> = { running: 'live', paused: 'warn', scheduled: 'neutral', completed: 'done', stopped: 'bad' };

export function CampaignStatus({ status }: { status: Campaign['status'] }) {
  return <span class={`badge badge-${TONE[status]}`}>{status}</span>;
}

export { Badge };
