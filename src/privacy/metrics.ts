import { Counter, Gauge } from 'prom-client';
import { registry } from '../metrics/index.js';

export const erasures = new Counter({
  name: 'dialer_privacy_erasures_total',
  help: 'Erasures on request carried out (POST /privacy/erasure)',
  registers: [registry],
});

export const retentionDeleted = new Counter({
  name: 'dialer_retention_deleted_total',
  help: 'Recordings and transcripts deleted by the retention job, by kind (recording, transcript)',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const retentionFailures = new Counter({
  name: 'dialer_retention_failures_total',
  help: 'Recordings the retention job could not delete (tried again on its next sweep)',
  registers: [registry],
});

export const retentionLastSweep = new Gauge({
  name: 'dialer_retention_last_sweep_timestamp_seconds',
  help: 'When the retention job last finished a sweep (Unix seconds)',
  registers: [registry],
});
