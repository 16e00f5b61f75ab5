import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';

/** The templates feature's only door. (Routes are being written: see the issue.) */
export function registerTemplates(app: App, deps: FeatureDeps): void {
  void app;
  void deps;
}
