// The hosted loan offer in a browser: the terms stated plainly with a worked example, a
// refusal in words when the box is not ticked (the name kept out of the page's address),
// accepted on a phone-sized screen; the link then no longer works. axe-core on every state, no
// Content-Security-Policy refusal, no sideways scroll, screenshots of each. Run by
// tests/e2e/tests/loans.rs, which then reads the loan back through the API.
//
//   HOLDFAST_URL=… HOLDFAST_OFFER_PATH=/loans/… node loan-offer.mjs
import assert from 'node:assert/strict';
import { artifacts, checkPage, freshPage, launch, main, required } from './lib.mjs';

const HOLDFAST = required('HOLDFAST_URL');
const OFFER = `${HOLDFAST}${required('HOLDFAST_OFFER_PATH')}`;
const shot = artifacts('loan-offer');
const browser = await launch();

const fresh = (viewport) => freshPage(browser, viewport);

const clean = (page, console, name) => checkPage(shot, page, console, name);

const tests = {
  async 'the terms are stated plainly, with a worked example'() {
    const { context, page, console } = await fresh();
    await page.goto(OFFER);
    await page.getByRole('heading', { name: 'Your financing offer' }).waitFor();
    const terms = await page.locator('dl.facts').innerText();
    assert.match(terms, /You receive\s+\$1,000\.00/);
    assert.match(terms, /Flat fee\s+\$100\.00/);
    assert.match(terms, /Total to repay\s+\$1,100\.00/);
    assert.match(terms, /10\.00 % of each settlement/);
    assert.match(terms, /At least \$200\.00 repaid in each 30 days/);
    const example = await page.getByText(/A day's sales settle|If a day's sales/).innerText();
    assert.match(example, /net of \$1,000\.00, \$100\.00 is withheld .* \$900\.00 is paid to you/);
    await clean(page, console, '01-offer');
    // The browser's own check stops an unticked box; without it the server says why.
    await page.getByLabel('Your full name').fill('Ada Lovelace');
    await page.locator('#agree').evaluate((box) => box.removeAttribute('required'));
    await page.getByRole('button', { name: 'Accept the offer' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /Tick the box/);
    assert.equal(await page.getByLabel('Your full name').inputValue(), 'Ada Lovelace', 'the name is kept to go on');
    assert.equal(await page.getByLabel(/I accept these terms/).getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Your full name').getAttribute('aria-invalid'), null, 'the name was fine');
    await clean(page, console, '02-not-ticked');
    await context.close();
  },

  async 'accepted on a phone, and the link then stops working'() {
    const { context, page, console } = await fresh({ width: 390, height: 844 });
    await page.goto(OFFER);
    await clean(page, console, '03-offer-phone');
    await page.getByLabel('Your full name').fill('Ada Lovelace');
    await page.getByLabel(/I accept these terms/).check();
    await page.getByRole('button', { name: 'Accept the offer' }).click();
    await page.getByRole('heading', { name: 'Offer accepted' }).waitFor();
    assert.match(await page.getByRole('status').innerText(), /\$1,000\.00 is on its way/);
    await clean(page, console, '04-accepted-phone');
    const again = await page.goto(OFFER);
    assert.equal(again.status(), 404, 'a decided offer\'s link no longer works');
    await clean(page, console, '05-link-gone');
    await context.close();
  },
};

await main(tests, browser);
