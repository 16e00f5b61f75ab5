/** The analytics rollup (migration 005): folding the trigger's deltas, and answering from it. */
export { foldRollup, runFolder, type FoldResult } from './fold.js';
export { rollupCanAnswer, rollupWhere } from './eligibility.js';
export { ROLLUP_QUERIES, type RollupQuery } from './queries.js';
