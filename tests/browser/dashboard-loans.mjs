// Loans in the dashboard: the platform's loans newest first, filtered by state, and one loan's
// terms, acceptance and repayments. axe-core on every state, no CSP refusal, screenshots. Run
// by tests/e2e/tests/loans.rs after the merchant accepted on the hosted page.
//
//   HOLDFAST_URL=… HOLDFAST_ADMIN_EMAIL=… HOLDFAST_ADMIN_PASSWORD=… HOLDFAST_LOAN_ID=…
//   node dashboard-loans.mjs
import assert from 'node:assert/strict';
import { main, required } from './lib.mjs';
import { HOLDFAST, browser, clean, fresh, rows, shot, signIn } from './dashboard-lib.mjs';

const ADMIN = { email: required('HOLDFAST_ADMIN_EMAIL'), password: required('HOLDFAST_ADMIN_PASSWORD') };
const LOAN = required('HOLDFAST_LOAN_ID');

const tests = {
  async "the platform's loans, and one loan's terms and repayments"() {
    const { context, page, console } = await fresh();
    await signIn(page, ADMIN);
    await page.getByRole('link', { name: 'Loans' }).click();
    await page.getByRole('heading', { name: 'Loans', level: 1 }).waitFor();
    const listed = await rows(page, 'Loans');
    assert.equal(listed.length, 1, listed.join('\n'));
    assert.match(listed[0], new RegExp(`^${LOAN}\\tmid_\\w+\\tpaid_out\\t\\$1,000\\.00\\t\\$0\\.00\\t\\$1,100\\.00\\t`));
    await clean(page, console, '40-loans');
    await page.getByLabel('State').selectOption('repaid');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('No loans in this state.').waitFor();
    await clean(page, console, '41-loans-none-repaid');

    await page.goto(`${HOLDFAST}/dashboard/loans?loan=${LOAN}`);
    await page.getByRole('heading', { name: `Loan ${LOAN}`, level: 1 }).waitFor();
    const facts = await page.locator('dl.facts').innerText();
    assert.match(facts, /Total to repay\s+\$1,100\.00/);
    assert.match(facts, /Withheld\s+10\.00 % of each settlement's net/);
    assert.match(facts, /Accepted\s+Ada Lovelace \(merchant\)/);
    assert.match(facts, /Payout\s+po_\w+/);
    assert.deepEqual(await rows(page, 'Repayments'), ['Nothing repaid yet.']);
    await clean(page, console, '42-loan');
    await page.setViewportSize({ width: 390, height: 900 });
    await shot(page, '43-loan-narrow');
    await context.close();
  },
};

await main(tests, browser);
