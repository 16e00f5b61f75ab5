/** The analytics rollup (migration 006): folding the trigger's deltas, and answering from it. */
export { foldDeltas } from './fold.js';
export { rollupCanAnswer, rollupWhere } from './eligibility.js';
export { ROLLUP_QUERIES, type RollupQuery } from './queries.js';
