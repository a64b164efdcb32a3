// Money in a browser: a merchant chosen on the Money page shows its balances, its payouts and
// its balance transactions, newest first; the CSV export holds every one of them. Run by
// tests/e2e/tests/dashboard.rs, which compares the CSV with the API's list.
//
//   HOLDFAST_URL=… HOLDFAST_ADMIN_EMAIL=… HOLDFAST_ADMIN_PASSWORD=… HOLDFAST_MERCHANT_ID=…
//   HOLDFAST_RESULT=… node dashboard-money.mjs
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { main, required } from './lib.mjs';
import { browser, clean, fresh, rows, shot, signIn } from './dashboard-lib.mjs';

const ADMIN = { email: required('HOLDFAST_ADMIN_EMAIL'), password: required('HOLDFAST_ADMIN_PASSWORD') };
const MERCHANT = required('HOLDFAST_MERCHANT_ID');

const tests = {
  async "a merchant's balances, payouts and balance transactions, and its CSV"() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('link', { name: 'Money' }).click();
    await page.getByRole('heading', { name: 'Money', level: 1 }).waitFor();
    await clean(page, console, '30-money-choose');

    await page.getByLabel('Merchant').selectOption(MERCHANT);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('heading', { name: 'Money: Shop', level: 1 }).waitFor();
    assert.deepEqual(await rows(page, 'Balances'), ['USD\t$14.41\t$0.00\t$0.00']);
    const payouts = await rows(page, 'Payouts');
    assert.equal(payouts.length, 1);
    assert.match(payouts[0], /^po_\w+\t\$10\.00\tpaid\t····6789\tnone\t/);
    const postings = await rows(page, 'Balance transactions');
    assert.deepEqual(
      postings.map((r) => r.split('\t').slice(0, 1).concat(r.split('\t').slice(2, 6))),
      [
        ['payout_paid', '-$10.00', '$0.00', '-$10.00', '$0.00'],
        ['payout', '$0.00', '$0.00', '$0.00', '-$10.00'],
        ['settlement', '$0.00', '$0.00', '$0.00', '$24.41'],
        ['charge', '$25.00', '$0.59', '$24.41', '$0.00'],
      ],
      'newest first: type, amount, fee, net, available'
    );
    await clean(page, console, '31-money-merchant');
    await page.setViewportSize({ width: 390, height: 900 });
    await shot(page, '32-money-merchant-narrow');
    await page.setViewportSize({ width: 1280, height: 900 });

    const link = page.getByRole('link', { name: 'Download all as CSV' });
    const answer = await page.request.get(await link.evaluate((a) => a.href));
    assert.equal(answer.status(), 200);
    assert.match(answer.headers()['content-type'], /^text\/csv/);
    assert.match(answer.headers()['content-disposition'], /^attachment; filename="balance-transactions-mid_\w+\.csv"$/);
    const csv = await answer.text();
    const lines = csv.trimEnd().split('\r\n');
    assert.equal(lines[0], 'id,type,source_id,payout_id,currency,amount,fee,net,pending,available,in_transit,created_on');
    assert.equal(lines.length, 5, 'a header and the four postings');
    assert.ok(lines.slice(1).every((l) => l.split(',').length === 12), 'twelve fields a row');
    writeFileSync(required('HOLDFAST_RESULT'), csv);

    // A merchant id that names none is not found, and never repeated.
    await page.goto(`${page.url().split('?')[0]}?merchant=mid_nothere<b>`);
    assert.ok(!(await page.content()).includes('<b>'), 'never repeated');
    await context.close();
  },
};

await main(tests, browser);
