/** Payload filters over the payload terms (migration 007). */
export { TERMS_ACTIVITY_AT, TERMS_FROM, storedTerm, termsCanAnswer, termsWhere } from './source.js';
