// What the dashboard's browser tests share: a fresh profile per test, signing in, an axe and
// CSP check with a screenshot, a table row by its first cell, and a form the page did not render.
import assert from 'node:assert/strict';
import { artifacts, checkPage, freshPage, launch, required } from './lib.mjs';

export const HOLDFAST = required('HOLDFAST_URL');
const shot = artifacts('dashboard');

export const browser = await launch();
export { shot };

/** A fresh browser profile's page, its console collected. */
export const fresh = (viewport) => freshPage(browser, viewport);

export async function signIn(page, { email, password }) {
  await page.goto(`${HOLDFAST}/dashboard`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** An API call with `key`, as an integration makes it. */
export async function callWith(key) {
  const response = await fetch(`${HOLDFAST}/v1/merchants`, { headers: { 'x-api-key': key } });
  return response.status;
}

export const clean = (page, console, name) => checkPage(shot, page, console, name);

/** The icon a browser asks for on a first visit is there (a 404 was a console error). */
export async function hasFavicon(page) {
  const icon = await page.request.get(`${HOLDFAST}/favicon.ico`);
  assert.equal(icon.status(), 200, 'favicon.ico');
  assert.match(icon.headers()['content-type'], /^image\//);
}

/**
 * Submits a form the page did not render, built in its DOM (as a forging page or a viewer's
 * devtools would): the browser's own form post, with its cookies and headers. Its status.
 */
export async function post(page, action, fields) {
  const response = page.waitForResponse((r) => r.request().method() === 'POST');
  await page.evaluate(({ action, fields }) => {
    const form = document.createElement('form');
    form.method = 'post';
    form.action = action;
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.append(input);
    }
    document.body.append(form);
    form.submit();
  }, { action, fields });
  const status = (await response).status();
  await page.waitForLoadState();
  return status;
}

export function row(page, name) {
  return page.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });
}

/** The text of each body row of the table in region `name`, its cells joined by tabs. */
export async function rows(page, name) {
  const region = page.getByRole('region', { name });
  return region.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.cells].map((td) => td.innerText.trim()).join('\t')));
}
