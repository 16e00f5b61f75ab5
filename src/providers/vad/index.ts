export { SileroVAD, preloadSilero } from './silero.js';
