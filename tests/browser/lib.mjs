// What every browser test shares: Debian's Chromium, launched so it never reaches the network
// on its own, a merchant's page served on another origin than Holdfast's, and screenshots.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const CHROMIUM = process.env.HOLDFAST_CHROMIUM || '/usr/bin/chromium';

export function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** Playwright gives every launch a fresh, temporary user-data-dir of its own. */
export async function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** Screenshots land in HOLDFAST_ARTIFACTS (default target/browser-artifacts). */
export function artifacts(group) {
  const dir = join(process.env.HOLDFAST_ARTIFACTS || 'target/browser-artifacts', group);
  mkdirSync(dir, { recursive: true });
  return async (page, name) => {
    const path = join(dir, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    return path;
  };
}

export function nonce() {
  return randomBytes(16).toString('base64');
}

/**
 * A merchant's web server on http://localhost:<port>, another origin (and site) than Holdfast's
 * http://127.0.0.1:<port>. `pages` maps a path to a function of the request's URL that returns
 * {html, csp}.
 */
export async function merchantServer(pages) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    const page = pages[url.pathname];
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const { html, csp } = page(url);
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': csp,
      'cache-control': 'no-store',
    });
    res.end(html);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${server.address().port}`;
  return { origin, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * Runs each named test in order, printing one line per result; then closes what `opened`
 * holds (a browser, a server) and exits non-zero if a test failed.
 */
export async function main(tests, ...opened) {
  let failed = 0;
  try {
    failed = await run(tests);
  } finally {
    for (const thing of opened) await thing.close();
  }
  process.exit(failed === 0 ? 0 : 1);
}

/**
 * axe-core over the page and every frame, as one document (as a screen reader meets it):
 * injected through DevTools, so the page's own policy is not loosened for it. Returns the
 * violations and the inputs the `label` rule found labelled (a positive control).
 */
export async function axe(page) {
  for (const frame of page.frames()) {
    await frame.evaluate(AXE);
    // axe talks only to frames of its own origin unless told otherwise.
    await frame.evaluate(() => window.axe.configure({ allowedOrigins: ['<unsafe_all_origins>'] }));
  }
  return page.evaluate(async () => {
    const all = await window.axe.run(document, { iframes: true });
    const labels = await window.axe.run(document, { iframes: true, runOnly: ['label'] });
    return {
      violations: all.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      labelled: labels.passes.flatMap((rule) => rule.nodes.map((n) => n.target.join(' '))),
    };
  });
}

/** Runs each named test in order, prints one line per result; returns how many failed. */
export async function run(tests) {
  let failed = 0;
  for (const [name, test] of Object.entries(tests)) {
    try {
      await test();
      console.log(`ok - ${name}`);
    } catch (error) {
      failed += 1;
      console.log(`not ok - ${name}\n${error && error.stack ? error.stack : error}`);
    }
  }
  return failed;
}

/**
 * The page never scrolls sideways, at a laptop's 1280 px and a phone's 390 px, and at 1280 px no
 * table is wider than its box (a cut-off "Delete" was found there). The page is put back as it
 * was.
 */
export async function fitsItsWidth(page, name) {
  const viewport = page.viewportSize();
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: viewport.height });
    const overflow = await page.evaluate(() => {
      const edge = document.documentElement.clientWidth;
      // The outermost elements that reach past the edge, to say what to mend.
      const past = [...document.body.querySelectorAll('*')]
        .filter((e) => e.getBoundingClientRect().right > edge + 1)
        .filter((e) => !e.closest('div.table') || e.matches('div.table'))
        .filter((e) => !(e.parentElement && e.parentElement.getBoundingClientRect().right > edge + 1))
        .map((e) => `${e.tagName.toLowerCase()}${e.className ? `.${e.className}` : ''}`);
      return {
        page: document.documentElement.scrollWidth - edge,
        past,
        tables: [...document.querySelectorAll('div.table')]
          .filter((box) => box.scrollWidth > box.clientWidth + 1)
          .map((box) => box.getAttribute('aria-label')),
      };
    });
    assert.ok(
      overflow.page <= 0,
      `${name}: the page scrolls sideways at ${width} px (past the edge: ${overflow.past.join(', ')})`,
    );
    if (width >= 1280) {
      assert.deepEqual(overflow.tables, [], `${name}: a table is wider than its box at ${width} px`);
    }
  }
  await page.setViewportSize(viewport);
}

/** A fresh profile's page in `browser`, its console collected. */
export async function freshPage(browser, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const console = [];
  page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
  return { context, page, console };
}

/**
 * A page state as it must be: its screenshot `name` taken with `shot`, axe-clean, no
 * Content-Security-Policy refusal in `console`, no sideways scroll.
 */
export async function checkPage(shot, page, console, name) {
  await shot(page, name);
  assert.deepEqual((await axe(page)).violations, [], `${name} is axe-clean`);
  const refused = console.filter((line) => /Content Security Policy|Refused to/i.test(line));
  assert.deepEqual(refused, [], `${name}: no CSP violation`);
  await fitsItsWidth(page, name);
}
