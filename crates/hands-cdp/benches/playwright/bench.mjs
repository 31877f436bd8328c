// Playwright's side of hands-cdp's `vs_playwright` bench: on the page the Rust bench serves,
// `page.locator('body').ariaSnapshot()` and `page.screenshot()` (PNG, and JPEG quality 80),
// timed per call, printed as one JSON object on stdout.
//
// Run by `cargo bench -p hands-cdp --bench vs_playwright`, which passes one JSON argument:
//   {"url": "...", "iterations": 20, "executablePath": "/usr/bin/chromium",
//    "args": [hands' own launch flags], "viewport": [1280, 800], "dump": null or a folder,
//    "mutate": an expression the page runs, untimed, before each "after a DOM change" snapshot,
//    "extraUrls": pages whose ariaSnapshot() is measured for size only, after the rest}
// With `dump`, one output of each kind is written there (aria_snapshot.yaml, playwright.png,
// playwright.jpeg), taken after the measured calls on the unchanged page.
// The browser is Debian's Chromium with exactly hands' flags (`ignoreDefaultArgs: true`), plus
// the three that Playwright's own launch needs to talk to it: a fresh `--user-data-dir`,
// `--remote-debugging-pipe` and `--no-startup-window`. No browser is ever downloaded.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';

import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const config = JSON.parse(process.argv[2] ?? '{}');
const [width, height] = config.viewport ?? [1280, 800];
const iterations = config.iterations ?? 20;

/** Awaits `call()` and returns [milliseconds, result]. */
async function timed(call) {
  const started = performance.now();
  const result = await call();
  return [performance.now() - started, result];
}

/** One measured operation: the first (cold) call apart, then every later call. */
function series() {
  return { first_ms: 0, ms: [], bytes: [] };
}

const profile = await mkdtemp(join(tmpdir(), 'hands-bench-playwright-'));
let browser;
try {
  browser = await chromium.launch({
    executablePath: config.executablePath ?? '/usr/bin/chromium',
    headless: true,
    ignoreDefaultArgs: true,
    args: [
      ...(config.args ?? []),
      `--user-data-dir=${profile}`,
      '--remote-debugging-pipe',
      '--no-startup-window',
    ],
  });
  const context = await browser.newContext({
    viewport: { width, height },
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  await page.goto(config.url, { waitUntil: 'load' });

  const aria = series();
  const ariaChanged = series();
  const png = series();
  const jpeg = series();
  const body = page.locator('body');
  const snapshot = async () => Buffer.byteLength(await body.ariaSnapshot(), 'utf8');
  const shotPng = async () => (await page.screenshot()).length;
  const shotJpeg = async () => (await page.screenshot({ type: 'jpeg', quality: 80 })).length;

  // The first call of each injects Playwright's script or warms the compositor: kept apart.
  [aria.first_ms] = await timed(snapshot);
  [png.first_ms] = await timed(shotPng);
  [jpeg.first_ms] = await timed(shotJpeg);
  // On the settled page, never changed before: every capture shows the same pixels as hands'.
  for (let i = 0; i < iterations; i++) {
    for (const [s, call] of [
      [aria, snapshot],
      [png, shotPng],
      [jpeg, shotJpeg],
    ]) {
      const [ms, bytes] = await timed(call);
      s.ms.push(ms);
      s.bytes.push(bytes);
    }
  }
  if (config.dump) {
    await mkdir(config.dump, { recursive: true });
    await writeFile(join(config.dump, 'aria_snapshot.yaml'), await body.ariaSnapshot());
    await writeFile(join(config.dump, 'playwright.png'), await page.screenshot());
    await writeFile(
      join(config.dump, 'playwright.jpeg'),
      await page.screenshot({ type: 'jpeg', quality: 80 }),
    );
  }

  // Then each snapshot right after the page's own script changed it (untimed).
  const mutate = () => page.evaluate(config.mutate ?? 'true');
  for (let i = 0; i <= iterations; i++) {
    await mutate();
    const [ms, bytes] = await timed(snapshot);
    if (i === 0) {
      ariaChanged.first_ms = ms;
    } else {
      ariaChanged.ms.push(ms);
      ariaChanged.bytes.push(bytes);
    }
  }

  // Extra pages, measured for size only.
  const extra = [];
  for (const [i, url] of (config.extraUrls ?? []).entries()) {
    await page.goto(url, { waitUntil: 'load' });
    const text = await page.locator('body').ariaSnapshot();
    extra.push(Buffer.byteLength(text, 'utf8'));
    if (config.dump) await writeFile(join(config.dump, `extra${i}.aria.yaml`), text);
  }

  process.stdout.write(
    JSON.stringify({
      playwright: require('playwright-core/package.json').version,
      node: process.version,
      browser: browser.version(),
      aria,
      aria_changed: ariaChanged,
      png,
      jpeg,
      extra,
    }) + '\n',
  );
} finally {
  if (browser) await browser.close();
  await rm(profile, { recursive: true, force: true });
}
