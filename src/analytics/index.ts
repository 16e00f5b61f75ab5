import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';

/** The analytics feature's only door. (Routes are being written: see the issue.) */
export function registerAnalytics(app: App, deps: FeatureDeps): void {
  void app;
  void deps;
}
