/**
 * Driving the dashboard in the real Chromium: `dialer serve` with a browser beside it
 * (serveDashboard), contexts at a chosen size, time zone and locale; logging in; and a screenshot of
 * a screen at 1280 px and at phone width, kept in test/screenshots/ (ignored by git) for a person
 * to look at.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import { CHROMIUM_PATH } from './browser.js';
import { freePort } from './net.js';
import { serveDialer, type Served } from './serve.js';

export const SCREENSHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../screenshots');
export const WIDE = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** The admin serveDashboard makes. */
export const ADMIN = { email: 'admin@example.com', password: 'admin-password-1' };

export interface DashboardServed extends Served {
  browser: Browser;
  /** A page in a fresh context, logged in as the admin at `at` (a dashboard path); its CSP refusals and page errors go into `problems` when given. */
  adminPage(at?: string, problems?: string[]): Promise<Page>;
  /** Closes the browser and Dialer and removes the data directory. */
  close(): Promise<void>;
}

/**
 * `dialer serve` on the embedded database in a temporary folder (`name` names it and the JWT
 * secret), the admin ADMIN, quiet logs, and a Chromium to drive its dashboard. It returns once the
 * dashboard's bundle is served (compiled on start: the first request waits for it). `env` adds to
 * or overrides these settings.
 */
export async function serveDashboard(name: string, env: Record<string, string> = {}): Promise<DashboardServed> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `dialer-${name}-`));
  const served = await serveDialer({
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: createHash('sha256').update(`${name} dashboard`).digest('hex'),
    DIALER_ADMIN_EMAIL: ADMIN.email,
    DIALER_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const browser = await launchDashboardBrowser();
  const warm = await fetch(`${served.server.url}${API_PREFIX}/app/login`, { signal: AbortSignal.timeout(300_000) });
  if (warm.status !== 200) throw new Error(`the dashboard did not load: HTTP ${warm.status}`);
  return {
    ...served,
    browser,
    async adminPage(at = '/', problems) {
      const page = await (await newContext(browser)).newPage();
      if (problems) watchProblems(page, problems);
      await logIn(page, served.server.url, ADMIN.email, ADMIN.password, at);
      return page;
    },
    async close() {
      await browser.close();
      await served.server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function launchDashboardBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
  });
}

/** A fresh context (no session): UTC and en-US, so the page formats numbers and days as the test computes them. */
export async function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ viewport: WIDE, timezoneId: 'UTC', locale: 'en-US', acceptDownloads: true });
}

/**
 * Every Content-Security-Policy refusal and page error the page reports, as they come: added to
 * `problems` (a list of the caller's, shared by its pages, or a new one), which is returned.
 */
export function watchProblems(page: Page, problems: string[] = []): string[] {
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return problems;
}

export async function logIn(page: Page, baseUrl: string, email: string, password: string, at = '/'): Promise<void> {
  await page.goto(`${baseUrl}${API_PREFIX}/app${at}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('.shell').waitFor();
}

/**
 * Saves the page as it is at 1280 px and at phone width (then back to 1280 px). After each resize it
 * waits for two animation frames (what the resize set off, the observers' re-renders and the charts'
 * redraws, is painted by then); CSS transitions are taken at their end.
 */
export async function shoot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await resized(page, WIDE);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-1280.png`), fullPage: true, animations: 'disabled' });
  await resized(page, PHONE);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true, animations: 'disabled' });
  await resized(page, WIDE);
}

async function resized(page: Page, size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
}
