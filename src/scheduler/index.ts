export { Scheduler, type SchedulerOptions, type SchedulerStats } from './worker.js';
export { inWindow, nextOpening, leadZone } from '../lib/windows.js';
export { runPreChecks, substitute, type PreCheckResult } from './prechecks.js';
export { UNREACHED } from '../lifecycle/finish.js';
export { finishAttempts, releaseClaim, renewLease, type FinishItem, type OnFinished } from '../lifecycle/finish.js';
export { effectiveConfiguration } from '../configurations/index.js';
