// Holdfast's own pages in a browser: the /demo checkout a newcomer opens (pay with a test card,
// see the transaction; a declined card says so) and the API reference at /docs. Run by
// tests/e2e/tests/hosted_fields.rs against `holdfast serve` with its demo.
//
//   HOLDFAST_URL=http://127.0.0.1:8080 node pages.mjs
import assert from 'node:assert/strict';
import { artifacts, axe, launch, main, required } from './lib.mjs';

const HOLDFAST = required('HOLDFAST_URL');
const shot = artifacts('pages');
const year = String((new Date().getUTCFullYear() + 2) % 100).padStart(2, '0');

const browser = await launch();

function input(page, field) {
  return page.frameLocator(`iframe[name^="holdfast-${field}-"]`).locator('#input');
}

async function payWith(number, cvv) {
  const context = await browser.newContext({ viewport: { width: 900, height: 1100 } });
  const page = await context.newPage();
  const console = [];
  page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
  await page.goto(`${HOLDFAST}/demo`);
  await input(page, 'number').pressSequentially(number, { delay: 5 });
  await input(page, 'expiry').pressSequentially(`11${year}`, { delay: 5 });
  await input(page, 'cvv').pressSequentially(cvv, { delay: 5 });
  return { page, context, console };
}

const tests = {
  async 'the API reference at /docs is axe-clean and loads nothing it is not allowed'() {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const console = [];
    page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
    await page.goto(`${HOLDFAST}/docs`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await shot(page, '00-docs');
    assert.deepEqual((await axe(page)).violations, []);
    assert.deepEqual(console.filter((line) => /Refused to|error/i.test(line)), []);
    await context.close();
  },

  async 'a test card pays, and the page shows the transaction and the completed session'() {
    const { page, context, console } = await payWith('4111111111111111', '123');
    const audit = await axe(page);
    assert.deepEqual(audit.violations, [], 'the checkout is axe-clean');
    assert.equal(audit.labelled.length, 3, `axe reached the frames' inputs: ${audit.labelled}`);
    await shot(page, '01-checkout-filled');
    await page.setViewportSize({ width: 360, height: 900 });
    await shot(page, '01b-checkout-narrow-screen');
    await page.setViewportSize({ width: 900, height: 1100 });
    await Promise.all([page.waitForURL(`${HOLDFAST}/demo/pay`), page.getByRole('button', { name: 'Pay $25.00' }).click()]);
    await page.getByRole('heading', { name: 'Paid' }).waitFor();
    await shot(page, '02-paid');
    const text = await page.locator('main').innerText();
    assert.match(text, /State\s+settled/);
    assert.match(text, /visa ending in 1111/);
    assert.match(text, /is now completed/);
    assert.deepEqual((await axe(page)).violations, [], 'the result is axe-clean');
    const refused = console.filter((line) => /Content Security Policy|Refused to/i.test(line));
    assert.deepEqual(refused, [], 'no CSP violation');
    await context.close();
  },

  async 'a declined card is shown as not paid, and the session stays open'() {
    const { page, context } = await payWith('4000000000000119', '123');
    await Promise.all([page.waitForURL(`${HOLDFAST}/demo/pay`), page.getByRole('button', { name: 'Pay $25.00' }).click()]);
    await page.getByRole('heading', { name: 'Not paid' }).waitFor();
    await shot(page, '03-declined');
    const text = await page.locator('main').innerText();
    assert.match(text, /State\s+declined/);
    assert.match(text, /is now open/);
    await context.close();
  },

  async 'a bad card number never leaves the page'() {
    const { page, context } = await payWith('4111111111111112', '123');
    await page.getByRole('button', { name: 'Pay $25.00' }).click();
    await page.locator('#error').filter({ hasText: 'Your card number is invalid.' }).waitFor();
    assert.equal(page.url(), `${HOLDFAST}/demo`);
    await shot(page, '04-refused-before-sending');
    await context.close();
  },
};

await main(tests, browser);
