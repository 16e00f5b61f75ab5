// Entry of the embedded database's thread. A worker thread does not inherit the main thread's
// TypeScript loader (tsx), so it registers its own before loading the thread's code.
import { register } from 'tsx/esm/api';

register();
await import('./pglite-thread.ts');
