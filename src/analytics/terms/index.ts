/** Payload filters over the payload terms (migrations 007, 035 and 037). */
export { rewritePendingTerms, TERMS_FOLD_BATCH } from './fold.js';
export { TERMS_ACTIVITY_AT, storedTerm, termsCanAnswer, termsFrom } from './source.js';
