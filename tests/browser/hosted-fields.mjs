// The hosted fields in a real browser, on a merchant page of another origin under a strict
// nonce Content-Security-Policy. Run by tests/e2e/tests/hosted_fields.rs, which starts Holdfast,
// passes its address and keys, and then pays with the token written to HOLDFAST_RESULT.
//
//   HOLDFAST_URL=http://127.0.0.1:8080 HOLDFAST_PUBLIC_KEY=pub_test_… \
//   HOLDFAST_PRIVATE_KEY=priv_test_… HOLDFAST_RESULT=/tmp/result.json node hosted-fields.mjs
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { artifacts, axe, launch, main, merchantServer, nonce, required } from './lib.mjs';

const HOLDFAST = required('HOLDFAST_URL');
const PUBLIC_KEY = required('HOLDFAST_PUBLIC_KEY');
const PRIVATE_KEY = required('HOLDFAST_PRIVATE_KEY');
const RESULT = required('HOLDFAST_RESULT');
// A client session's secret: the first test tokenizes under it.
const CLIENT_SECRET = required('HOLDFAST_CLIENT_SECRET');
// A Google Pay token made the way Google makes it (by the Rust test, with keys the server
// trusts as Google's), which the page's stand-in for Google Pay hands back; and its merchant.
const GOOGLE_PAY_TOKEN = required('HOLDFAST_GOOGLE_PAY_TOKEN');
const MERCHANT = required('HOLDFAST_MERCHANT');
// An Apple Pay payment token made the way Apple makes it, for the ApplePaySession stand-in.
const APPLE_PAY_TOKEN = required('HOLDFAST_APPLE_PAY_TOKEN');
const PAN = '4111111111111111';
const shot = artifacts('hosted-fields');

const year = (new Date().getUTCFullYear() + 3) % 100;
const FUTURE = `12${String(year).padStart(2, '0')}`;

/** The merchant's checkout: only its own nonce'd scripts and Holdfast's script and frames. */
function checkout(url) {
  const n = nonce();
  const key = url.searchParams.get('as') === 'private' ? PRIVATE_KEY : PUBLIC_KEY;
  // `?forged=1`: a secret of the right shape that is no session's, which Holdfast refuses.
  const clientSecret = url.searchParams.has('session') ? CLIENT_SECRET
    : url.searchParams.has('forged') ? 'cs_01JDX0000000000000000000AB_secret_ABCDEFGHIJKLMNOPQRSTUVWXYZ' : null;
  // The optional name-on-card field.
  const named = url.searchParams.has('name');
  // A third party's frame in the page (an ad, say), on yet another origin.
  const evil = url.searchParams.has('evil') ? server.origin.replace('localhost', '127.0.0.1') : null;
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${n}' ${HOLDFAST}`,
    `style-src 'nonce-${n}'`,
    `frame-src ${HOLDFAST}${evil ? ` ${evil}` : ''}`,
    "connect-src 'none'",
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Checkout - Test Shop</title>
<style nonce="${n}">
  body { font-family: system-ui, sans-serif; max-width: 30rem; margin: 2rem auto; padding: 0 1rem; color: #1a1f36; }
  .row { display: flex; gap: 1rem; } .row > div { flex: 1; }
  button { margin-top: 1rem; padding: .6rem 1.4rem; font-size: 1rem; }
  #error { color: #b42318; }
</style>
<script nonce="${n}">
  // What the page's own scripts can see: every message it receives, every policy violation.
  window.seen = [];
  window.violations = [];
  window.addEventListener('message', (event) => window.seen.push(JSON.stringify(event.data)), true);
  document.addEventListener('securitypolicyviolation', (event) =>
    window.violations.push(event.violatedDirective + ' ' + event.blockedURI));
</script>
</head>
<body>
<main>
<h1>Checkout</h1>
<form id="pay">
  ${named ? '<div id="card-name"></div>' : ''}
  <div id="card-number"></div>
  <div class="row"><div id="card-expiry"></div><div id="card-cvv"></div></div>
  <button type="submit">Pay</button>
</form>
<p id="result" role="status"></p>
<p id="error" role="alert"></p>
${evil ? `<iframe id="evil" title="Advertisement" src="${evil}/evil"></iframe>` : ''}
</main>
<script nonce="${n}">
  window.scriptFailed = false;
  const script = document.createElement('script');
  script.nonce = ${JSON.stringify(n)};
  script.src = ${JSON.stringify(`${HOLDFAST}/v1/clients/holdfast.js?publicApiKey=${encodeURIComponent(key)}`)};
  script.addEventListener('error', () => { window.scriptFailed = true; });
  script.addEventListener('load', () => {
    window.fields = Holdfast.fields({
      clientSecret: ${JSON.stringify(clientSecret)},
      fields: { number: '#card-number', expiry: '#card-expiry', cvv: '#card-cvv'${named ? ", name: '#card-name'" : ''} },
      style: { base: { color: 'rgb(20, 40, 60)', fontSize: '17px' }, invalid: { color: 'rgb(180, 35, 24)' } },
    });
    window.changes = [];
    window.fields.on('change', (event) => window.changes.push(event));
    document.getElementById('pay').addEventListener('submit', async (event) => {
      event.preventDefault();
      document.getElementById('result').textContent = '';
      document.getElementById('error').textContent = '';
      try {
        const { token, brand } = await window.fields.tokenize();
        document.getElementById('result').textContent = 'Token ' + token + ' (' + brand + ')';
      } catch (error) {
        document.getElementById('error').textContent = error.code + ' on ' + error.field + ': ' + error.message;
      }
    });
  });
  document.body.appendChild(script);
</script>
</body>
</html>`;
  return { html, csp };
}

/** A third party's frame: it forges messages to the page and to Holdfast's frames. */
function evilFrame() {
  const n = nonce();
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Ad</title></head>
<body><p>An advertisement</p>
<script nonce="${n}">
  // Called by the test once the card is typed, with the form's channel (as if the attacker
  // had learnt it): only the origin and source checks stand in its way.
  window.attack = (channel) => {
    parent.postMessage({ holdfast: 1, channel, field: 'number', type: 'change', empty: false, complete: true, valid: true, brand: 'FORGED' }, '*');
    parent.postMessage({ holdfast: 1, channel, field: 'number', type: 'tokenized', request: 'x', token: 'tkn_FORGED', brand: 'visa' }, '*');
    for (let i = 0; i < parent.frames.length; i++) {
      const sibling = parent.frames[i];
      if (sibling === window) continue;
      for (const type of ['tokenize', 'configure', 'clear']) {
        sibling.postMessage({ holdfast: 1, channel, type, request: 'evil', options: { label: 'Hacked' } }, '*');
      }
    }
  };
</script></body></html>`;
  return { html, csp: `default-src 'none'; script-src 'nonce-${n}'` };
}

/**
 * A merchant page under a strict nonce policy: `stub` (a stand-in for a wallet's own script)
 * runs first, then Holdfast's script, then `setup`, the page's few lines.
 */
function walletPage(title, stub, setup) {
  const n = nonce();
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${n}' ${HOLDFAST}`,
    `style-src 'nonce-${n}'`,
    `frame-src ${HOLDFAST}`,
    "connect-src 'none'",
    "base-uri 'none'",
  ].join('; ');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title} - Test Shop</title>
<style nonce="${n}">body { font-family: system-ui, sans-serif; max-width: 30rem; margin: 2rem auto; } button { padding: .6rem 1.2rem; }</style>
<script nonce="${n}">
  window.violations = [];
  document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective));
  ${stub}
</script>
</head>
<body>
<main>
<h1>${title}</h1>
<div id="button"></div>
<p id="result" role="status"></p>
<p id="error" role="alert"></p>
</main>
<script nonce="${n}" src="${HOLDFAST}/v1/clients/holdfast.js?publicApiKey=${encodeURIComponent(PUBLIC_KEY)}"></script>
<script nonce="${n}">
  const pay = ${setup};
  pay.on('token', (r) => { document.getElementById('result').textContent = 'Token ' + r.token + ' (' + r.brand + ')'; });
  pay.on('error', (e) => { document.getElementById('error').textContent = e.code + ': ' + e.message; });
</script>
</body>
</html>`;
  return { html, csp };
}

/** Holdfast's Apple Pay button over a stand-in for Safari's `ApplePaySession`. */
function apple() {
  return walletPage('Pay with Apple Pay', `
  window.apple = { requests: [], merchantSessions: [], completed: [] };
  window.ApplePaySession = class {
    static canMakePayments() { return true; }
    constructor(version, request) { window.apple.requests.push({ version, request }); }
    begin() {
      setTimeout(() => this.onvalidatemerchant({ validationURL: 'https://apple-pay-gateway-cert.apple.com/paymentservices/startSession' }), 10);
    }
    completeMerchantValidation(session) {
      window.apple.merchantSessions.push(session);
      setTimeout(() => this.onpaymentauthorized({ payment: { token: { paymentData: JSON.parse(${JSON.stringify(APPLE_PAY_TOKEN)}) } } }), 10);
    }
    completePayment(status) { window.apple.completed.push(status); }
    abort() { window.apple.completed.push('aborted'); }
  };
  window.ApplePaySession.STATUS_SUCCESS = 0;
  window.ApplePaySession.STATUS_FAILURE = 1;`,
  "Holdfast.applePay({ container: '#button', amount: 2500, currency: 'USD', countryCode: 'US', label: 'Test Shop' })");
}

/** Holdfast's Google Pay button over a stand-in for Google's `pay.js`. */
function wallet() {
  return walletPage('Pay with a wallet', `
  window.googleRequests = [];
  window.google = { payments: { api: { PaymentsClient: function (options) {
    window.googleEnvironment = options.environment;
    this.isReadyToPay = () => Promise.resolve({ result: true });
    this.createButton = (o) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = 'Pay with Google Pay';
      button.addEventListener('click', o.onClick);
      return button;
    };
    this.loadPaymentData = (request) => {
      window.googleRequests.push(request);
      return Promise.resolve({ paymentMethodData: { tokenizationData: { type: 'PAYMENT_GATEWAY', token: ${JSON.stringify(GOOGLE_PAY_TOKEN)} } } });
    };
  } } } };`,
  `Holdfast.googlePay({ container: '#button', merchantId: ${JSON.stringify(MERCHANT)}, amount: 2500, currency: 'USD', merchantName: 'Test Shop' })`);
}

/**
 * docs/hosted-fields.md's snippet and its example policy, exactly as written there, with only
 * its placeholders filled in: what an integrator copies must work under what it recommends.
 */
function documented() {
  const doc = readFileSync(new URL('../../docs/hosted-fields.md', import.meta.url), 'utf8');
  const block = (after, fence) => {
    const from = doc.indexOf(after);
    assert.ok(from >= 0, `docs/hosted-fields.md has "${after}"`);
    const open = doc.indexOf(fence, from) + fence.length;
    return doc.slice(open, doc.indexOf('\n```', open)).trim();
  };
  const snippet = block('## The snippet', '```html');
  const policy = block('For example, a strict nonce policy', '```')
    .replace(/^Content-Security-Policy:\s*/, '')
    .replace(/\s*\n\s*/g, ' ');
  return { snippet, policy };
}

function documentedPage() {
  const n = nonce();
  const { snippet, policy } = documented();
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>The documented snippet</title></head>
<body><main><h1>Checkout</h1>
${snippet
    .replaceAll('https://HOLDFAST', HOLDFAST)
    .replaceAll('pub_test_...', encodeURIComponent(PUBLIC_KEY))
    .replaceAll('RANDOM', n)}
</main></body></html>`;
  const csp = policy.replaceAll('https://api.holdfast.example', HOLDFAST).replaceAll('RANDOM', n);
  return { html, csp };
}

const server = await merchantServer({ '/checkout': checkout, '/wallet': wallet, '/apple': apple, '/evil': evilFrame, '/documented': documentedPage });
const browser = await launch();

/** A fresh page on the checkout, with the frames loaded; console lines kept. */
async function open(query = '') {
  const context = await browser.newContext({ viewport: { width: 640, height: 720 } });
  const page = await context.newPage();
  const console = [];
  page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
  await page.goto(`${server.origin}/checkout${query}`);
  return { page, console, context };
}

async function framesReady(page, fields = ['number', 'expiry', 'cvv']) {
  for (const field of fields) {
    await input(page, field).waitFor();
  }
  // The page hears 'ready' from each frame before it configures it.
  await page.waitForFunction((n) => window.fields && window.seen.filter((m) => m.includes('"ready"')).length === n, fields.length);
}

function input(page, field) {
  return page.frameLocator(`iframe[name^="holdfast-${field}-"]`).locator('#input');
}

function frameOf(page, field) {
  return page.frames().find((frame) => frame.name().startsWith(`holdfast-${field}-`));
}

async function fill(page, number, expiry, cvv) {
  await input(page, 'number').pressSequentially(number, { delay: 5 });
  await input(page, 'expiry').pressSequentially(expiry, { delay: 5 });
  await input(page, 'cvv').pressSequentially(cvv, { delay: 5 });
}

function noPolicyViolations(console, violations) {
  assert.deepEqual(violations, [], 'the merchant page saw no CSP violation');
  const refused = console.filter((line) => /Content Security Policy|Refused to/i.test(line));
  assert.deepEqual(refused, [], 'no frame reported a CSP violation');
}

const tests = {
  async 'a card typed into the frames becomes a token of the client session; the page never holds the number'() {
    const { page, console, context } = await open('?session=1');
    await framesReady(page);
    await shot(page, '01-empty');
    await fill(page, PAN, FUTURE, '123');
    assert.equal(await input(page, 'number').inputValue(), '4111 1111 1111 1111', 'grouped as typed');
    assert.equal(await input(page, 'expiry').inputValue(), `12 / ${FUTURE.slice(2)}`);
    await shot(page, '02-filled');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForFunction(() => /Token tkn_/.test(document.getElementById('result').textContent));
    await shot(page, '03-tokenized');
    await page.setViewportSize({ width: 360, height: 720 });
    await shot(page, '03b-narrow-screen');
    const result = await page.locator('#result').textContent();
    const token = /tkn_[A-Za-z0-9]+/.exec(result)[0];
    assert.match(result, /\(visa\)/);

    // The page: not in its DOM, not in any message it received, not reachable in the frames.
    const html = await page.content();
    const seen = await page.evaluate(() => window.seen.join('\n'));
    for (const needle of [PAN, '4111 1111 1111 1111', '1111 1111']) {
      assert.ok(!html.includes(needle), `page DOM holds ${needle}`);
      assert.ok(!seen.includes(needle), `a message to the page holds ${needle}`);
    }
    assert.ok(!seen.includes('"123"'), 'no message carries the security code');
    assert.ok(!seen.includes(CLIENT_SECRET), 'the secret goes to the number frame, never back');
    const reachable = await page.evaluate(() =>
      Array.from(document.querySelectorAll('iframe')).map((frame) => {
        try {
          return frame.contentDocument !== null;
        } catch {
          return false;
        }
      }));
    assert.deepEqual(reachable, [false, false, false], 'the frames are closed to the page');
    const changes = await page.evaluate(() => window.changes.map((c) => c.field + ':' + JSON.stringify(c.state)));
    assert.ok(changes.includes('number:{"empty":false,"complete":true,"valid":true,"brand":"visa"}'), changes.join('\n'));
    noPolicyViolations(console, await page.evaluate(() => window.violations));
    writeFileSync(RESULT, JSON.stringify({ token }));
    await context.close();
  },

  async "Holdfast's own refusal reaches the page as an error, the card's fields left as typed"() {
    const { page, context } = await open('?forged=1&name=1');
    const posted = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/v1/tokens')) posted.push(request.url());
    });
    await framesReady(page, ['name', 'number', 'expiry', 'cvv']);
    await fill(page, PAN, FUTURE, '123');
    await input(page, 'name').pressSequentially('Ada Lovelace');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForFunction(() => /:/.test(document.getElementById('result').textContent + document.getElementById('error').textContent));
    assert.equal(await page.locator('#result').textContent(), '');
    const error = await page.locator('#error').textContent();
    // The API's code; its field (clientSecret) is not a card field, so the page gets none.
    assert.match(error, /^parameter_invalid on null: clientSecret: /, error);
    assert.equal(posted.length, 1, 'the refusal came from Holdfast');
    assert.equal(await input(page, 'number').inputValue(), '4111 1111 1111 1111');
    await shot(page, '12-refused-by-holdfast');
    await context.close();
  },

  async 'the snippet in the docs runs under the policy the docs recommend, verbatim'() {
    const context = await browser.newContext({ viewport: { width: 640, height: 720 } });
    const page = await context.newPage();
    const console = [];
    page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
    await page.goto(`${server.origin}/documented`);
    for (const field of ['number', 'expiry', 'cvv']) await input(page, field).waitFor();
    await fill(page, PAN, FUTURE, '123');
    const tokenized = page.waitForResponse((r) => r.url().includes('/v1/tokens') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Pay' }).click();
    const answer = await tokenized;
    assert.equal(answer.status(), 201, 'the documented submit handler tokenizes');
    assert.match((await answer.json()).id, /^tkn_/);
    await shot(page, '00-documented-snippet');
    const refused = console.filter((line) => /Content Security Policy|Refused to/i.test(line));
    assert.deepEqual(refused, [], 'no part of the documented snippet is blocked by the documented policy');
    await context.close();
  },

  async 'a bad Luhn digit and a past expiry are shown inline and announced'() {
    const { page, context } = await open();
    await framesReady(page);
    await fill(page, '4111111111111112', '0120', '12');
    await input(page, 'number').click();
    await shot(page, '04-inline-errors');
    const number = frameOf(page, 'number');
    const expiry = frameOf(page, 'expiry');
    for (const [frame, message] of [
      [number, 'Your card number is invalid.'],
      [expiry, 'The expiration date is in the past.'],
    ]) {
      const error = await frame.evaluate(() => {
        const field = document.getElementById('input');
        const line = document.getElementById(field.getAttribute('aria-describedby'));
        return {
          text: line.textContent,
          live: line.getAttribute('aria-live'),
          invalid: field.getAttribute('aria-invalid'),
        };
      });
      assert.deepEqual(error, { text: message, live: 'polite', invalid: 'true' });
    }
    // The merchant's invalid colour, applied inside the frame through the style object.
    const color = await number.evaluate(() => getComputedStyle(document.getElementById('input')).color);
    assert.equal(color, 'rgb(180, 35, 24)');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForFunction(() => document.getElementById('error').textContent !== '');
    assert.equal(await page.locator('#error').textContent(), 'field_invalid on number: Your card number is invalid.');
    const cvv = await frameOf(page, 'cvv').evaluate(() => document.getElementById('error').textContent);
    assert.equal(cvv, 'The security code is incomplete.', 'every field shows its error on submit');
    await shot(page, '05-refused');
    await context.close();
  },

  async 'the merchant style object reaches the frames, the page CSS does not'() {
    const { page, context } = await open();
    await framesReady(page);
    const style = await frameOf(page, 'number').evaluate(() => {
      const field = getComputedStyle(document.getElementById('input'));
      return { color: field.color, fontSize: field.fontSize };
    });
    assert.deepEqual(style, { color: 'rgb(20, 40, 60)', fontSize: '17px' });
    await context.close();
  },

  async 'Tab moves through the fields in order, with a visible focus ring'() {
    const { page, context } = await open();
    await framesReady(page);
    await input(page, 'number').focus();
    const order = [];
    // Focus crosses into another frame's document a moment after the key press: each step
    // waits (up to 5 s) for it to arrive before reading where it is.
    const arrives = (target, check) =>
      target.waitForFunction(check, null, { timeout: 5000 }).then(() => true, () => false);
    for (const field of ['number', 'expiry', 'cvv']) {
      const frame = frameOf(page, field);
      const focused = await arrives(frame, () => document.activeElement === document.getElementById('input'));
      const outline = await frame.evaluate(() => getComputedStyle(document.getElementById('input')).outlineStyle);
      order.push([field, focused, outline]);
      if (field === 'expiry') await shot(page, '06-keyboard-focus');
      await page.keyboard.press('Tab');
    }
    assert.deepEqual(order, [
      ['number', true, 'solid'],
      ['expiry', true, 'solid'],
      ['cvv', true, 'solid'],
    ]);
    await arrives(page, () => document.activeElement && document.activeElement.textContent === 'Pay');
    const button = await page.evaluate(() => document.activeElement.textContent);
    assert.equal(button, 'Pay', 'after the last field, focus returns to the page');
    await context.close();
  },

  async 'axe-core finds no violation in the page or in any frame'() {
    const { page, context } = await open('?name=1');
    await framesReady(page, ['name', 'number', 'expiry', 'cvv']);
    await input(page, 'number').pressSequentially('4111111111111112');
    await input(page, 'name').pressSequentially('Ada\u00ad');
    await input(page, 'expiry').click();
    const nameError = await frameOf(page, 'name').evaluate(() => document.getElementById('error').textContent);
    assert.equal(nameError, 'The name has characters that cannot be printed.');
    const { violations, labelled } = await axe(page);
    // Positive control: the inputs inside the frames were reached and found labelled.
    assert.equal(labelled.length, 4, `axe reached the frames' inputs: ${labelled}`);
    assert.deepEqual(violations, []);
    const titles = await page.evaluate(() => Array.from(document.querySelectorAll('iframe')).map((f) => f.title));
    assert.deepEqual(titles, ['Secure name on card input', 'Secure card number input', 'Secure expiration date input', 'Secure security code input']);
    await context.close();
  },

  async 'the Google Pay button asks for gateway holdfast and turns the wallet token into a token'() {
    const context = await browser.newContext({ viewport: { width: 640, height: 480 } });
    const page = await context.newPage();
    const console = [];
    page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
    await page.goto(`${server.origin}/wallet`);
    await page.getByRole('button', { name: 'Pay with Google Pay' }).click();
    await page.waitForFunction(() => /Token tkn_|:/.test(document.getElementById('result').textContent + document.getElementById('error').textContent));
    assert.equal(await page.locator('#error').textContent(), '');
    const result = await page.locator('#result').textContent();
    assert.match(result, /^Token tkn_[A-Za-z0-9]+ \(visa\)$/);
    await shot(page, '08-google-pay-token');
    const asked = await page.evaluate(() => ({ environment: window.googleEnvironment, request: window.googleRequests[0] }));
    assert.equal(asked.environment, 'TEST', 'a test key asks the TEST environment');
    const method = asked.request.allowedPaymentMethods[0];
    assert.deepEqual(method.tokenizationSpecification, {
      type: 'PAYMENT_GATEWAY',
      parameters: { gateway: 'holdfast', gatewayMerchantId: MERCHANT },
    });
    assert.deepEqual(asked.request.transactionInfo, { totalPriceStatus: 'FINAL', totalPrice: '25.00', currencyCode: 'USD' });
    noPolicyViolations(console, await page.evaluate(() => window.violations));
    assert.deepEqual((await axe(page)).violations, []);
    writeFileSync(`${RESULT}.wallet`, JSON.stringify({ token: /tkn_[A-Za-z0-9]+/.exec(result)[0] }));
    await context.close();
  },

  async 'the Apple Pay button validates the merchant through Holdfast and turns the payment into a token'() {
    const context = await browser.newContext({ viewport: { width: 640, height: 480 } });
    const page = await context.newPage();
    const console = [];
    page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
    await page.goto(`${server.origin}/apple`);
    await page.getByRole('button', { name: 'Pay with Apple Pay' }).click();
    await page.waitForFunction(() => document.getElementById('result').textContent + document.getElementById('error').textContent !== '');
    assert.equal(await page.locator('#error').textContent(), '');
    const result = await page.locator('#result').textContent();
    assert.match(result, /^Token tkn_[A-Za-z0-9]+ \(visa\)$/);
    await shot(page, '11-apple-pay-token');
    const seen = await page.evaluate(() => window.apple);
    assert.equal(seen.requests[0].version, 3);
    assert.deepEqual(seen.requests[0].request.total, { label: 'Test Shop', amount: '25.00' });
    assert.equal(seen.merchantSessions.length, 1);
    assert.match(seen.merchantSessions[0].merchantSessionIdentifier, /^SANDBOX_/);
    assert.equal(seen.merchantSessions[0].domainName, 'localhost', 'the page\'s own domain');
    assert.deepEqual(seen.completed, [0], 'completePayment(STATUS_SUCCESS)');
    noPolicyViolations(console, await page.evaluate(() => window.violations));
    assert.deepEqual((await axe(page)).violations, []);
    writeFileSync(`${RESULT}.apple`, JSON.stringify({ token: /tkn_[A-Za-z0-9]+/.exec(result)[0] }));
    await context.close();
  },

  async 'a third party frame in the page can neither drive the fields nor forge a token'() {
    const { page, context } = await open('?evil=1');
    const posted = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/v1/tokens')) posted.push(request.frame().url());
    });
    await framesReady(page);
    await fill(page, PAN, FUTURE, '123');
    const channel = await page.evaluate(() => document.querySelector('iframe[name^="holdfast-number-"]').name.slice('holdfast-number-'.length));
    const evil = page.frames().find((frame) => frame.url().endsWith('/evil'));
    await evil.evaluate((c) => window.attack(c), channel);
    await page.waitForTimeout(500);
    assert.deepEqual(posted, [], 'no frame tokenized for the third party');
    assert.equal(await frameOf(page, 'number').evaluate(() => document.getElementById('label').textContent), 'Card number');
    assert.equal(await input(page, 'number').inputValue(), '4111 1111 1111 1111', 'not cleared');
    const forged = await page.evaluate(() => window.changes.filter((c) => c.state.brand === 'FORGED').length);
    assert.equal(forged, 0, 'no forged state reached the page');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForFunction(() => /Token tkn_/.test(document.getElementById('result').textContent));
    const result = await page.locator('#result').textContent();
    assert.ok(!result.includes('FORGED'), result);
    assert.equal(posted.length, 1, 'one tokenization, the page\'s own');
    await shot(page, '09-third-party-frame-ignored');
    await context.close();
  },

  async "the browser's card autofill, chosen in one field, fills all four (name too)"() {
    const { page, context } = await open('?name=1');
    const sent = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/v1/tokens')) sent.push(JSON.parse(request.postData()));
    });
    await framesReady(page, ['name', 'number', 'expiry', 'cvv']);
    // The frames are cross-origin, so each runs in a target of its own; Chromium's own test
    // hook fills a saved card as if the customer picked it in the number field.
    const frame = await context.newCDPSession(frameOf(page, 'number'));
    const { root } = await frame.send('DOM.getDocument', { depth: -1 });
    const { nodeId } = await frame.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#input' });
    const { node } = await frame.send('DOM.describeNode', { nodeId });
    const { frameTree } = await frame.send('Page.getFrameTree');
    // Autofill is the page's: the field is named by its node and its frame.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Autofill.trigger', {
      fieldId: node.backendNodeId,
      frameId: frameTree.frame.id,
      card: { number: PAN, name: 'Ada Lovelace', expiryMonth: '12', expiryYear: `20${FUTURE.slice(2)}`, cvc: '123' },
    });
    await page.waitForFunction(() => window.fields.state().complete);
    const values = {};
    for (const field of ['number', 'expiry', 'cvv', 'name']) values[field] = await input(page, field).inputValue();
    assert.deepEqual(values, { number: '4111 1111 1111 1111', expiry: `12 / ${FUTURE.slice(2)}`, cvv: '123', name: 'Ada Lovelace' });
    await shot(page, '10-autofilled');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForFunction(() => /Token tkn_/.test(document.getElementById('result').textContent));
    assert.equal(sent.length, 1);
    assert.equal(sent[0].payment.name, 'Ada Lovelace', 'the name frame\'s value went with the card');
    assert.ok(!(await page.content()).includes('Ada Lovelace'), 'the name is not in the page');
    await context.close();
  },

  async 'a private key in the script URL is refused and nothing loads'() {
    const { page, context } = await open('?as=private');
    await page.waitForFunction(() => window.scriptFailed === true);
    assert.equal(await page.evaluate(() => typeof window.Holdfast), 'undefined');
    assert.equal(await page.locator('iframe').count(), 0);
    await shot(page, '07-private-key-refused');
    await context.close();
  },
};

await main(tests, browser, server);
