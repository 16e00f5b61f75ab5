export { Scheduler, type SchedulerOptions, type SchedulerStats } from './worker.js';
export { runPreChecks, type PreCheckResult } from './prechecks.js';
export { claimBatch, type ClaimOptions, type ClaimReport, type StoppedResellers } from './claim-rules.js';
