import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';

/** The leads feature's only door. (Routes are being written: see the issue.) */
export function registerLeads(app: App, deps: FeatureDeps): void {
  void app;
  void deps;
}
