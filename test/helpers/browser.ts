/**
 * A real headless Chromium for end-to-end tests of pages (Debian's chromium, driven by
 * playwright-core; no browser download). Its fake microphone plays a WAV file in a loop.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM_PATH);
}

export interface TestBrowser {
  browser: Browser;
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile whose fake microphone speaks `micWav`. */
export async function launchBrowser(micWav: string): Promise<TestBrowser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${micWav}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  return {
    browser: context.browser()!,
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
