// Settings → Webhooks in a browser: a subscription that failed three times is set inactive and
// active again and shows 0 failures (spec 3.2's dashboard toggle); its history shows the bodies;
// its secret is revealed to an admin; a subscription made with the form names the signed-in user
// as its creator; edit and delete. Run by tests/e2e/tests/dashboard.rs, which then asks the API.
//
//   HOLDFAST_URL=… HOLDFAST_ADMIN_EMAIL=… HOLDFAST_ADMIN_PASSWORD=… HOLDFAST_WEBHOOK_ID=…
//   HOLDFAST_RECEIVER_URL=… HOLDFAST_RESULT=… node dashboard-webhooks.mjs
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { main, required } from './lib.mjs';
import { HOLDFAST, browser, clean, fresh, row, signIn } from './dashboard-lib.mjs';

const ADMIN = { email: required('HOLDFAST_ADMIN_EMAIL'), password: required('HOLDFAST_ADMIN_PASSWORD') };
const FAILING = required('HOLDFAST_WEBHOOK_ID');
const RECEIVER = required('HOLDFAST_RECEIVER_URL');

const tests = {
  async 'a failing subscription set inactive and active again shows 0 failures'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('link', { name: 'Settings › Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    const listed = row(page, RECEIVER).first();
    assert.match(await listed.innerText(), /Yes\s+3\s+Failed/, 'active, 3 failures, last failed');
    await clean(page, console, '20-webhooks');

    await listed.getByRole('link', { name: `Details of ${RECEIVER}` }).click();
    await page.getByRole('heading', { name: `Subscription ${FAILING}` }).waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /3 of 25/);
    // Settings left empty are said in words, never a program's `None`.
    assert.doesNotMatch(await page.locator('dl.facts').innerText(), /\bNone\b/);
    const history = page.locator('ul.deliveries > li');
    assert.equal(await history.count(), 3, 'one entry per notification');
    await history.first().getByText(/Request and response/).click();
    assert.match(await history.first().locator('pre').first().innerText(), /"eventType":\s*"transaction.created"/);
    assert.match(await history.first().locator('pre').nth(1).innerText(), /HTTP 500/);
    await clean(page, console, '21-webhook-details');

    await page.getByRole('button', { name: 'Set inactive' }).click();
    await page.getByText('The subscription is inactive').waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /Active\s+No[\s\S]*3 of 25/, 'off, the counter kept');
    await page.getByRole('button', { name: 'Set active' }).click();
    await page.getByText('failure counter back to 0').waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /Active\s+Yes[\s\S]*0 of 25/);
    await clean(page, console, '22-webhook-enabled');
    // Said once: a later reload shows the page as it is, not the news of the change.
    await page.reload();
    await page.getByRole('button', { name: 'Set inactive' }).waitFor();
    assert.equal(await page.getByText('failure counter back to 0').count(), 0, 'not said again on a reload');

    await page.getByRole('button', { name: 'Reveal signing secret' }).click();
    const secret = await page.getByLabel('Secret value').inputValue();
    assert.match(secret, /^whsec_/);
    await clean(page, console, '23-secret-revealed');
    await page.goto(`${HOLDFAST}/dashboard/settings/webhooks/${FAILING}`);
    assert.ok(!(await page.content()).includes(secret), 'shown only when asked');
    writeFileSync(required('HOLDFAST_RESULT'), JSON.stringify({ secret }));
    await context.close();
  },

  async 'a subscription is created, refused in words, edited and deleted'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.goto(`${HOLDFAST}/dashboard/settings/webhooks`);
    await page.getByLabel('Endpoint URL').fill('https://hooks.example.com/orders');
    await page.getByRole('button', { name: 'Create subscription' }).click();
    assert.match(await page.getByRole('alert').innerText(), /^Events: /, 'no event chosen, named in words');
    await clean(page, console, '24-webhook-refused');
    await page.getByLabel('Endpoint URL').fill('https://hooks.example.com/orders');
    await page.getByRole('checkbox', { name: 'merchant.created' }).check();
    await page.getByLabel('Description (optional, in the disable email)').fill('Orders');
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.getByText('The subscription is created.').waitFor();
    const id = (await page.getByRole('heading', { level: 1 }).innerText()).replace('Subscription ', '');
    await page.getByRole('checkbox', { name: 'merchant.updated' }).check();
    await page.getByRole('button', { name: 'Save subscription' }).click();
    await page.getByText('The subscription is saved.').waitFor();
    assert.match(await page.locator('dl.facts').innerText(), /merchant.created, merchant.updated/);
    writeFileSync(`${required('HOLDFAST_RESULT')}.created`, JSON.stringify({ id }));

    await page.goto(`${HOLDFAST}/dashboard/settings/webhooks`);
    await page.getByLabel('Endpoint URL').fill('https://hooks.example.com/old');
    await page.getByRole('checkbox', { name: 'merchant.deleted' }).check();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.getByText('The subscription is created.').waitFor();
    await page.getByRole('link', { name: 'Delete this subscription' }).click();
    await page.getByRole('heading', { name: 'Delete the subscription to https://hooks.example.com/old?' }).waitFor();
    await clean(page, console, '25-webhook-delete-confirmation');
    await page.getByRole('button', { name: 'Delete it for good' }).click();
    await page.getByText('The subscription and its delivery history are deleted.').waitFor();
    assert.equal(await row(page, 'https://hooks.example.com/old').count(), 0);
    assert.equal(await row(page, 'https://hooks.example.com/orders').count(), 1);
    await context.close();
  },
};

await main(tests, browser);
