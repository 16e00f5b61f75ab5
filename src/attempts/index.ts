/**
 * Running an attempt, whatever its transport: its trace, its lease and its end, written durably
 * (the one caller of the lifecycle's finish). See attempts.ts.
 */
export { Attempts, Attempt, KEPT, type AttemptsOptions, type FinishStatus } from './attempts.js';
