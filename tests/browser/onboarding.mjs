// The hosted boarding form in a browser: a merchant fills it over two visits, is told in words
// which answer is wrong, reviews and submits; on a phone-sized screen too. axe-core on every
// state, no Content-Security-Policy refusal, screenshots of each. Run by
// tests/e2e/tests/onboarding.rs, which then reads the form back through the API.
//
//   HOLDFAST_URL=… HOLDFAST_FORM_PATH=/onboarding/… node onboarding.mjs
import assert from 'node:assert/strict';
import { artifacts, checkPage, freshPage, launch, main, required } from './lib.mjs';

const HOLDFAST = required('HOLDFAST_URL');
const FORM = `${HOLDFAST}${required('HOLDFAST_FORM_PATH')}`;
const shot = artifacts('onboarding');
const browser = await launch();

const fresh = (viewport) => freshPage(browser, viewport);

const clean = (page, console, name) => checkPage(shot, page, console, name);

const tests = {
  async 'a first visit saves part of the form, and a wrong answer is named, not repeated'() {
    const { context, page, console } = await fresh();
    await page.goto(FORM);
    await page.getByRole('heading', { name: 'Tell us about your business' }).waitFor();
    await clean(page, console, '01-empty-form');
    await page.getByLabel('Legal name').fill('Corner Shop LLC');
    await page.getByLabel('Business type').selectOption('llc');
    await page.getByLabel('Country').selectOption('US');
    await page.getByLabel('Tax id').fill('98-765');
    await page.getByLabel('Website').fill('http://corner.example.com');
    await page.getByRole('button', { name: 'Save progress' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /Tax id: must be an EIN/);
    assert.ok(!(await page.content()).includes('98-765'), 'the wrong tax id is not repeated');
    assert.equal(await page.getByLabel('Tax id').inputValue(), '', 'a secret is never put back in the form');
    assert.equal(await page.getByLabel('Legal name').inputValue(), 'Corner Shop LLC', 'what is not secret is kept');
    // Each refusal beside its field, the field described by it; a refused answer that is not
    // secret is kept to be mended.
    const website = page.getByLabel('Website');
    assert.equal(await website.inputValue(), 'http://corner.example.com', 'a refused answer is kept');
    assert.equal(await website.getAttribute('aria-invalid'), 'true');
    assert.match(await website.getAttribute('aria-describedby'), /website-error/);
    assert.match(await page.locator('#website-error').innerText(), /https/);
    assert.match(await page.locator('#taxId-error').innerText(), /EIN/);
    await clean(page, console, '02-refused');
    await website.fill('https://corner.example.com');
    await page.getByLabel('Tax id').fill('45-8302716');
    await page.getByRole('button', { name: 'Save progress' }).click();
    await page.getByText('Your answers are saved.').waitFor();
    assert.match(await page.locator('main').innerText(), /ends in 2716/);
    await clean(page, console, '03-saved');
    await context.close();
  },

  async 'a second visit on a phone finishes, reviews and submits'() {
    const { context, page, console } = await fresh({ width: 375, height: 800 });
    await page.goto(FORM);
    assert.equal(await page.getByLabel('Legal name').inputValue(), 'Corner Shop LLC', 'kept from the first visit');
    const fill = {
      Address: '1 Main St',
      City: 'Springfield',
      'Postal code': '12345',
      Website: 'https://corner.example.com',
      'Merchant category code': '5734',
      'Expected monthly card volume': '25000',
      'Owner 1: name': 'Ada Lovelace',
      'Owner 1: date of birth': '1980-04-30',
      'Owner 1: ownership': '60',
      'Account holder': 'Corner Shop LLC',
      'Routing number (optional)': '021000021',
      'Account number (optional)': '73920184650',
    };
    for (const [label, value] of Object.entries(fill)) {
      await page.getByLabel(label, { exact: true }).fill(value);
    }
    await clean(page, console, '04-filled-phone');
    await page.getByRole('button', { name: 'Review and submit' }).click();
    await page.getByRole('heading', { name: 'Review and submit' }).waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /ending in 4650/);
    await clean(page, console, '05-review');
    await page.getByLabel('Your full name').fill('Ada Lovelace');
    await page.getByLabel(/I confirm/).check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByText(/This form is/).waitFor();
    assert.match(await page.getByRole('status').innerText(), /approved/);
    await clean(page, console, '06-approved');
    await context.close();
  },
};

await main(tests, browser);
