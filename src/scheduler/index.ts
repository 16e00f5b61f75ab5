export { Scheduler, type SchedulerOptions, type SchedulerStats } from './worker.js';
export { inWindow, nextOpening, leadZone } from './windows.js';
export { runPreChecks, substitute, type PreCheckResult } from './prechecks.js';
export { UNREACHED } from './transitions.js';
