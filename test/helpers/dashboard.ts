/**
 * Driving the dashboard in the real Chromium: a browser with contexts at a chosen size, time zone
 * and locale; logging in; and a screenshot of a screen at 1280 px and at phone width, kept in
 * test/screenshots/ (ignored by git) for a person to look at.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import { CHROMIUM_PATH } from './browser.js';

export const SCREENSHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../screenshots');
export const WIDE = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

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

/** Every Content-Security-Policy refusal and page error the page reports. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
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
