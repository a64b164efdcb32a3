// The dashboard in a browser: signing in (and being refused, and throttled), the API Keys page
// (a key generated, its value read once and used, deactivated, activated, renamed, deleted),
// the Test/Live switch, what a viewer sees, a form without its token refused, a password set
// through a one-time link. Run by tests/e2e/tests/dashboard.rs against `holdfast serve`.
//
//   HOLDFAST_URL=… HOLDFAST_ADMIN_EMAIL=… HOLDFAST_ADMIN_PASSWORD=… HOLDFAST_VIEWER_EMAIL=…
//   HOLDFAST_VIEWER_PASSWORD=… HOLDFAST_INVITE_LINK=… HOLDFAST_INVITED_EMAIL=… node dashboard.mjs
import assert from 'node:assert/strict';
import { main, required } from './lib.mjs';
import { HOLDFAST, browser, callWith, clean, fresh, hasFavicon, post, row, shot, signIn } from './dashboard-lib.mjs';

const ADMIN = { email: required('HOLDFAST_ADMIN_EMAIL'), password: required('HOLDFAST_ADMIN_PASSWORD') };
const VIEWER = { email: required('HOLDFAST_VIEWER_EMAIL'), password: required('HOLDFAST_VIEWER_PASSWORD') };

const tests = {
  async 'a wrong password is refused without saying which field was wrong'() {
    const { context, page, console } = await fresh();
    await page.goto(`${HOLDFAST}/dashboard`);
    await clean(page, console, '00-sign-in');
    await hasFavicon(page);
    await signIn(page, { email: ADMIN.email, password: 'not the password at all' });
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.innerText(), 'That email and password do not match an account.');
    await signIn(page, { email: 'nobody@example.com', password: ADMIN.password });
    assert.equal(await page.getByRole('alert').innerText(), 'That email and password do not match an account.');
    await clean(page, console, '01-sign-in-refused');
    await context.close();
  },

  async 'a key is generated, shown once, used, deactivated (401), activated (200), renamed and deleted'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('heading', { name: 'API Keys', level: 1 }).waitFor();
    await clean(page, console, '02-api-keys');
    assert.match(await page.getByRole('status').first().innerText(), /Test mode/);
    // Spec 5's rotation steps, as guidance on the page.
    await page.getByRole('heading', { name: 'Rotating a key' }).waitFor();
    assert.equal(await page.getByRole('region', { name: 'Rotating a key' }).getByRole('listitem').count(), 4);

    await page.getByLabel('Name', { exact: true }).fill('Checkout server');
    await page.getByLabel('Type').selectOption('private');
    await page.getByRole('button', { name: 'Generate key' }).click();
    const value = await page.getByLabel('Key value').inputValue();
    assert.match(value, /^priv_test_[A-Za-z0-9]{26}$/);
    assert.match(await page.locator('section.created').innerText(), /will not be shown again/);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await clean(page, console, '03-key-generated-shown-once');
    assert.equal(await callWith(value), 200, 'the new key works at once');

    // Post/redirect/get: a reload neither shows the value again nor makes a second key.
    assert.ok(!page.url().includes('?'), `the value's page has a plain address: ${page.url()}`);
    const keysBefore = await page.getByRole('row').count();
    await page.reload();
    await page.getByRole('heading', { name: 'API Keys', level: 1 }).waitFor();
    assert.equal(await page.getByLabel('Key value').count(), 0, 'not shown on a reload');
    assert.equal(await page.getByRole('row').count(), keysBefore, 'a reload makes no key');
    assert.equal(await row(page, 'Checkout server').count(), 1);
    await clean(page, console, '03a-reloaded-no-value');

    await page.goto(`${HOLDFAST}/dashboard/keys`);
    assert.equal(await page.getByLabel('Key value').count(), 0, 'never shown again');
    assert.ok(!(await page.content()).includes(value), 'the value is on no later page');
    const key = row(page, 'Checkout server');
    assert.match(await key.innerText(), new RegExp(value.slice(-4)), 'its last four are');

    await key.getByRole('button', { name: 'Deactivate Checkout server' }).click();
    await page.getByText('The key is inactive').waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'API Keys', level: 1 }).waitFor();
    assert.equal(await page.getByText('The key is inactive').count(), 0, 'said once, not on a reload');
    assert.equal(await callWith(value), 401, 'deactivated, it is refused');
    await shot(page, '04-key-deactivated');
    await row(page, 'Checkout server').getByRole('button', { name: 'Activate Checkout server' }).click();
    await page.getByText('The key is active').waitFor();
    assert.equal(await callWith(value), 200, 'activated, it works again');

    await row(page, 'Checkout server').getByRole('link', { name: 'Rename Checkout server' }).click();
    await page.getByRole('heading', { name: 'Rename the key Checkout server' }).waitFor();
    await page.getByLabel('New name').fill('no');
    await page.getByLabel('New name').evaluate((input) => input.removeAttribute('minlength'));
    await page.getByRole('button', { name: 'Rename' }).click();
    assert.match(await page.getByRole('alert').innerText(), /3 to 25 characters/, 'the server checks too');
    await clean(page, console, '05a-rename-refused');
    await page.getByLabel('New name').fill('Checkout v2');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByText('The key is renamed.').waitFor();
    assert.equal(await row(page, 'Checkout v2').count(), 1);

    await row(page, 'Checkout v2').getByRole('link', { name: 'Delete Checkout v2' }).click();
    await page.getByRole('heading', { name: 'Delete the key Checkout v2?' }).waitFor();
    await clean(page, console, '05-delete-confirmation');
    await page.getByRole('button', { name: 'Delete Checkout v2 for good' }).click();
    await page.getByText('The key is deleted for good.').waitFor();
    assert.equal(await row(page, 'Checkout v2').count(), 0);
    assert.equal(await callWith(value), 401, 'deleted, it is refused');
    await context.close();
  },

  async 'the Test/Live switch shows and creates in the chosen mode'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('button', { name: 'Live' }).click();
    await page.getByText('Live mode: real keys and real payments.').waitFor();
    assert.equal(await row(page, 'Default Private Key').count(), 0, 'no test key in live mode');
    await page.getByLabel('Name', { exact: true }).fill('Live server');
    await page.getByRole('button', { name: 'Generate key' }).click();
    assert.match(await page.getByLabel('Key value').inputValue(), /^priv_[A-Za-z0-9]{26}$/);
    await clean(page, console, '06-live-mode-key');
    await page.goto(`${HOLDFAST}/dashboard/keys`);
    assert.equal(await row(page, 'Live server').count(), 1);
    await page.getByRole('button', { name: 'Test' }).click();
    await page.getByText('Test mode: everything shown').waitFor();
    assert.equal(await row(page, 'Live server').count(), 0, 'the live key is not in test mode');
    await context.close();
  },

  async 'merchants are created (refused in words first), edited and deleted'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('link', { name: 'Merchants' }).click();
    await page.getByRole('heading', { name: 'Merchants', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('Corner Shop');
    await page.getByLabel('Currency (three letters, such as USD)').fill('eur');
    await page.getByRole('button', { name: 'Create merchant' }).click();
    assert.match(await page.getByRole('alert').innerText(), /^Currency: /, 'the field named');
    assert.ok(!(await page.getByRole('alert').innerText()).includes('eur'), 'never echoed');
    await clean(page, console, '40-merchant-refused');
    await page.getByLabel('Name').fill('Corner Shop');
    await page.getByLabel('Currency (three letters, such as USD)').fill('EUR');
    await page.getByRole('button', { name: 'Create merchant' }).click();
    await page.getByText('The merchant is created.').waitFor();
    assert.match(await row(page, 'Corner Shop').innerText(), /EUR/);
    await clean(page, console, '41-merchants');
    await row(page, 'Corner Shop').getByRole('link', { name: 'Edit Corner Shop' }).click();
    await page.getByLabel('Name').fill('Corner Shop & Café');
    await page.getByRole('button', { name: 'Save merchant' }).click();
    await page.getByText('The merchant is saved.').waitFor();
    await row(page, 'Corner Shop & Café').getByRole('link', { name: 'Delete Corner Shop & Café' }).click();
    await page.getByRole('heading', { name: 'Delete the merchant Corner Shop & Café?' }).waitFor();
    await clean(page, console, '42-merchant-delete-confirmation');
    await page.getByRole('button', { name: 'Delete Corner Shop & Café' }).click();
    await page.getByText('The merchant is deleted').waitFor();
    assert.equal(await row(page, 'Corner Shop & Café').count(), 0);
    await context.close();
  },

  async 'the Processors page shows each connection, and what Adyen needs, secrets by their last four'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('link', { name: 'Processors' }).click();
    await page.getByRole('heading', { name: 'Processors', level: 1 }).waitFor();
    assert.match(await row(page, 'Adyen EU').innerText(), /adyen/);
    assert.match(await row(page, 'Sandbox').innerText(), /sandbox/);
    const adyen = page.getByRole('region', { name: 'Adyen EU (Adyen)' });
    const details = await adyen.innerText();
    assert.match(details, /HoldfastECOM/);
    assert.match(details, /https:\/\/checkout-test\.adyen\.com\/v71/);
    assert.match(details, /ending in Mzlp/);
    assert.match(details, /ending in A056/);
    assert.match(details, /\/notifications\/adyen\/midCon_[A-Za-z0-9]+/);
    const html = await page.content();
    for (const secret of ['AQEyhmfxK4PNbhZGw0m', '44782DEF547AAA06', 'notification-password']) {
      assert.ok(!html.includes(secret), 'no secret on the page');
    }
    await clean(page, console, '45-processors');
    // Live mode starts with none, and says so.
    await page.getByRole('button', { name: 'Live' }).click();
    await page.getByText('No live processor connections yet.').waitFor();
    await clean(page, console, '46-processors-live-empty');
    await page.getByRole('button', { name: 'Test' }).click();
    await page.getByRole('region', { name: 'Adyen EU (Adyen)' }).waitFor();
    await context.close();
    // On a phone, nothing runs off the side (the long ids and URLs wrap or scroll in their box).
    const phone = await fresh({ width: 375, height: 800 });
    await signIn(phone.page, ADMIN);
    await phone.page.goto(`${HOLDFAST}/dashboard/processors`);
    await phone.page.getByRole('region', { name: 'Adyen EU (Adyen)' }).waitFor();
    await clean(phone.page, phone.console, '47-processors-phone');
    await phone.context.close();
  },

  async 'a form posted without its token is refused'() {
    const { context, page } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('heading', { name: 'API Keys', level: 1 }).waitFor();
    for (const token of [null, 'x'.repeat(43)]) {
      const fields = { name: 'Forged key', type: 'private', ...(token ? { csrf: token } : {}) };
      assert.equal(await post(page, '/dashboard/keys', fields), 403);
      assert.match(await page.getByRole('alert').innerText(), /did not come from the dashboard/);
    }
    await shot(page, '11-forged-form-refused');
    await page.goto(`${HOLDFAST}/dashboard/keys`);
    assert.equal(await row(page, 'Forged key').count(), 0, 'nothing was made');
    await context.close();
  },

  async 'a viewer sees no secret and no button that changes anything'() {
    const { context, page, console } = await fresh();
    await signIn(page, VIEWER);
    await page.getByRole('heading', { name: 'API Keys', level: 1 }).waitFor();
    await clean(page, console, '07-viewer');
    assert.equal(await page.getByRole('button', { name: /Generate|Rename|Deactivate|Activate/ }).count(), 0);
    assert.equal(await page.getByRole('link', { name: /Delete|Rename/ }).count(), 0);
    assert.equal(await page.getByLabel('Key value').count(), 0);
    assert.equal(await page.getByRole('columnheader', { name: 'Actions' }).count(), 0);
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const status = await post(page, '/dashboard/keys', { csrf, name: 'Viewer key', type: 'private' });
    assert.equal(status, 403, 'with a good token, still not an admin');
    assert.match(await page.getByRole('alert').innerText(), /Viewers can look but not change anything/);
    await context.close();
  },

  async 'a one-time link sets a password that then signs in, once'() {
    const { context, page, console } = await fresh();
    const link = required('HOLDFAST_INVITE_LINK');
    await page.goto(link);
    await clean(page, console, '08-choose-password');
    await page.getByLabel('Password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Password again').fill('a different one');
    await page.getByRole('button', { name: 'Set password' }).click();
    assert.match(await page.getByRole('alert').innerText(), /differ/);
    await page.getByLabel('Password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Password again').fill('a brand new password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Your password is set.').waitFor();
    await signIn(page, { email: required('HOLDFAST_INVITED_EMAIL'), password: 'a brand new password' });
    await page.getByRole('heading', { name: 'API Keys', level: 1 }).waitFor();
    // Used, the link says so at once: no form to fill in vain, and the way to a new one.
    await page.goto(link);
    await page.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
    assert.match(await page.getByRole('alert').innerText(), /unknown, used or expired/);
    assert.equal(await page.getByLabel('Password', { exact: true }).count(), 0, 'no password form');
    await page.getByRole('link', { name: 'Ask for a new link' }).waitFor();
    await clean(page, console, '08a-used-link');
    await context.close();
  },

  async 'five wrong passwords throttle the account, even for the right one'() {
    const { context, page, console } = await fresh();
    for (let i = 0; i < 5; i += 1) {
      await signIn(page, { email: VIEWER.email, password: `wrong password ${i}` });
      await page.getByRole('alert').waitFor();
    }
    await signIn(page, VIEWER);
    assert.match(await page.getByRole('alert').innerText(), /Too many sign-in attempts/);
    await clean(page, console, '09-throttled');
    await context.close();
  },

  async 'the Audit Log lists who changed what, and the platform switch finds no other account'() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('link', { name: 'Audit Log' }).click();
    await page.getByRole('heading', { name: 'Audit Log', level: 1 }).waitFor();
    await clean(page, console, '12-audit-log');
    assert.ok(await page.getByRole('cell', { name: 'Generated API key' }).count() > 0);
    assert.ok(await page.getByRole('cell', { name: 'Signed in' }).count() > 0);
    // A command line's entry has no address: said in words, never a program's `None`.
    assert.ok(await page.getByRole('cell', { name: 'not recorded', exact: true }).count() > 0);
    assert.equal(await page.getByRole('cell', { name: 'None', exact: true }).count(), 0);
    await page.getByRole('link', { name: 'Switch platform' }).click();
    await page.getByRole('heading', { name: 'Platforms', level: 1 }).waitFor();
    assert.match(await page.locator('main').innerText(), /no account on another platform/);
    await clean(page, console, '15-platforms');
    await page.getByRole('link', { name: 'Boarding' }).click();
    await page.getByRole('heading', { name: 'Boarding', level: 1 }).waitFor();
    await clean(page, console, '16-boarding');
    await context.close();
  },

  async 'a forgotten password is asked for by email, and the answer tells nothing'() {
    const { context, page, console } = await fresh();
    await page.goto(`${HOLDFAST}/dashboard`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await clean(page, console, '13-reset');
    const ask = async (email) => {
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Email me a link' }).click();
      await page.getByRole('status').waitFor();
      // innerText follows the layout: read it once the stylesheet applies, or a label and its
      // field may run together on one answer and not the other.
      await page.waitForLoadState('load');
      return page.locator('main').innerText();
    };
    const unknown = await ask('nobody@example.com');
    assert.match(unknown, /If an account uses that email address/);
    await clean(page, console, '14-reset-asked');
    await page.goto(`${HOLDFAST}/dashboard/reset`);
    const known = await ask(ADMIN.email);
    assert.equal(known.replace(ADMIN.email, 'nobody@example.com'), unknown,
      'an address with an account gets the same answer as one without');
    await context.close();
  },

  async 'the dashboard reads on a phone, and signing out ends the session'() {
    const { context, page, console } = await fresh({ width: 375, height: 800 });
    await signIn(page, ADMIN);
    await page.getByRole('heading', { name: 'API Keys', level: 1 }).waitFor();
    await clean(page, console, '10-phone');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await page.goto(`${HOLDFAST}/dashboard/keys`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await context.close();
  },
};

await main(tests, browser);
