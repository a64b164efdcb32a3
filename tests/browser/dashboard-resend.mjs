// The Transaction Log in a browser (spec 6.4): filters, a transaction's details, its Webhook
// Deliveries tab, a delivery, Resend Webhook (accepted, not delivered, a new id), and the
// refusal once the subscription is inactive. Run by tests/e2e/tests/dashboard.rs, whose
// receiver then checks what arrived.
//
//   HOLDFAST_URL=… HOLDFAST_ADMIN_EMAIL=… HOLDFAST_ADMIN_PASSWORD=… HOLDFAST_TRANSACTION_ID=…
//   HOLDFAST_RESULT=… node dashboard-resend.mjs
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { main, required } from './lib.mjs';
import { HOLDFAST, browser, clean, fresh, signIn } from './dashboard-lib.mjs';

const ADMIN = { email: required('HOLDFAST_ADMIN_EMAIL'), password: required('HOLDFAST_ADMIN_PASSWORD') };
const TXN = required('HOLDFAST_TRANSACTION_ID');

const tests = {
  async 'the Transaction Log filters by type and state'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('link', { name: 'Transaction Log' }).click();
    await page.getByRole('heading', { name: 'Transaction Log', level: 1 }).waitFor();
    await page.getByRole('link', { name: TXN }).waitFor();
    // Amounts as people read them: the auth of 1000 cents is $10.00.
    assert.match(await page.locator('table').innerText(), /\$10\.00/);
    await clean(page, console, '30-transaction-log');
    await page.getByLabel('State').selectOption('declined');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No transactions match.').waitFor();
    await page.getByLabel('State').selectOption('authorized');
    await page.getByLabel('Type').selectOption('auth');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('link', { name: TXN }).waitFor();
    await context.close();
  },

  async 'a delivery is resent with a new id, and refused once its subscription is inactive'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.goto(`${HOLDFAST}/dashboard/transactions`);
    await page.getByRole('link', { name: TXN }).click();
    await page.getByRole('heading', { name: `Transaction ${TXN}` }).waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /State\s+authorized/);
    assert.match(await page.locator('dl.facts').innerText(), /Amount\s+\$10\.00 \(1000 in minor units of USD\)/);
    await clean(page, console, '31-transaction-details');
    await page.getByRole('link', { name: 'Webhook Deliveries' }).click();
    const original = page.locator('ul.deliveries > li').first();
    assert.match(await original.innerText(), /transaction.created/);
    await clean(page, console, '32-webhook-deliveries-tab');
    await original.getByRole('link').first().click();
    await page.getByRole('heading', { name: /^Delivery ntf_/ }).waitFor();
    await page.getByRole('button', { name: 'Resend Webhook' }).waitFor();
    await clean(page, console, '33-delivery');
    const deliveryPage = page.url();
    const subscription = await page.getByRole('link', { name: /^wh_/ }).getAttribute('href');
    await page.getByRole('button', { name: 'Resend Webhook' }).click();
    const accepted = await page.getByRole('status').filter({ hasText: 'Resend accepted' }).innerText();
    assert.match(accepted, /not delivered yet/);
    const resent = accepted.match(/ntf_[A-Za-z0-9]+/)[0];
    writeFileSync(required('HOLDFAST_RESULT'), JSON.stringify({ resent }));
    await clean(page, console, '34-resend-accepted');

    // The subscription set inactive in Settings: a resend is refused in words.
    await page.goto(`${HOLDFAST}${subscription}`);
    await page.getByRole('button', { name: 'Set inactive' }).click();
    await page.getByText('The subscription is inactive').waitFor();
    await page.goto(deliveryPage);
    await page.getByRole('button', { name: 'Resend Webhook' }).click();
    assert.match(await page.getByRole('alert').innerText(), /Re-enable the subscription first/);
    await clean(page, console, '35-resend-refused-inactive');
    await context.close();
  },
};

await main(tests, browser);
