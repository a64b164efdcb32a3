// Calls the server refuses, each one a type error in a client generated from the published
// document (openapi-typescript + openapi-fetch). `tsc` passes only if every
// `@ts-expect-error` below marks a real error: a rule the server enforces but the document
// leaves out makes its call type-check, the directive goes unused, and the compilation fails.
// Run by tests/e2e/tests/contract.rs, which then runs the compiled file against a live server
// to check that each call is indeed refused with 400, and that the valid calls are not.
//
//   node generated/out/refused.js BASE_URL PRIVATE_KEY MERCHANT_ID AUTH_ID

import createClient from "openapi-fetch";
import type { paths } from "./generated/api.js";

declare const process: { argv: string[]; exitCode: number };

const [baseUrl, key, merchantId, authId] = process.argv.slice(2);
const api = createClient<paths>({ baseUrl, headers: { "x-api-key": key } });
const card = { number: "4111111111111111", cvv: "123", expiration: "1230" };

type Answer = Promise<{ response: Response }>;

// Each refused call: what it leaves out or adds, and the call.
const refused: [string, () => Answer][] = [
  // @ts-expect-error a capture names the auth it captures
  ["a capture without transactionId", () => api.POST("/v1/transactions", { body: { type: "capture" } })],
  // @ts-expect-error an auth pays with something
  ["an auth without payment", () => api.POST("/v1/transactions", { body: { type: "auth", merchantId, amount: 1000 } })],
  // @ts-expect-error card fields or a token, never both
  ["card fields beside a token", () => api.POST("/v1/transactions", { body: { type: "auth", merchantId, amount: 1000, payment: { ...card, token: "tkn_01JDQ8Y6M2Z4R7V9T3B5N8K1XW" } } })],
  // @ts-expect-error a void is of the whole auth
  ["a void with an amount", () => api.POST("/v1/transactions", { body: { type: "void", transactionId: authId, amount: 100 } })],
  // @ts-expect-error a follow-up's merchant is its transaction's
  ["a refund naming a merchant", () => api.POST("/v1/transactions", { body: { type: "refund", transactionId: authId, merchantId } })],
  // @ts-expect-error amounts are integers, not strings
  ["an amount as a string", () => api.POST("/v1/transactions", { body: { type: "sale", merchantId, amount: "1000", payment: card } })],
  // @ts-expect-error there is no such type
  ["an unknown type", () => api.POST("/v1/transactions", { body: { type: "authorize", merchantId, amount: 1000, payment: card } })],
  // @ts-expect-error a payment's card has its cvv
  ["a payment card without cvv", () => api.POST("/v1/transactions", { body: { type: "sale", merchantId, amount: 1000, payment: { number: card.number, expiration: card.expiration } } })],
  // @ts-expect-error a subscription names its endpoint and events
  ["an empty subscription", () => api.POST("/v1/webhooks", { body: {} })],
  // @ts-expect-error a token is of card fields or of a wallet's token, not both
  ["a token of a card and a wallet", () => api.POST("/v1/tokens", { body: { payment: card, wallet: { type: "google_pay", token: "{}" } } })],
  // @ts-expect-error a vault token is bound to no session
  ["a vault token with a client secret", () => api.POST("/v1/tokens", { body: { type: "vault", payment: card, clientSecret: "cs_01JDQ8Y6M2Z4R7V9T3B5N8K1XW_secret_abcdefghijklmnop" } })],
  // @ts-expect-error a form is for an existing merchant or a new one
  ["a form for two merchants", () => api.POST("/v1/boarding-forms", { body: { merchantId, merchant: { name: "Other" } } })],
  // @ts-expect-error an Adyen connection has its account
  ["an Adyen connection without its account", () => api.POST("/v1/processor-connections", { body: { name: "Adyen", kind: "adyen" } })],
  // @ts-expect-error a sandbox connection has no Adyen account
  ["a sandbox connection with an Adyen account", () => api.POST("/v1/processor-connections", { body: { name: "Sandbox", kind: "sandbox", adyen: { merchantAccount: "Shop", apiKey: "k".repeat(16), hmacKey: "00".repeat(32), notificationUsername: "u", notificationPassword: "p".repeat(8) } } })],
  // @ts-expect-error a merchant has a name
  ["a merchant without a name", () => api.POST("/v1/merchants", { body: {} })],
  // @ts-expect-error a client session is for a merchant
  ["a client session without its merchant", () => api.POST("/v1/client-sessions", { body: { amount: 1000 } })],
  // @ts-expect-error a plan has its fee
  ["a plan without its fee", () => api.POST("/v1/plans", { body: { name: "Gold", defaultConnectionId: "midCon_01JDQ8Y6M2Z4R7V9T3B5N8K1XW" } })],
  // @ts-expect-error only `true` attests
  ["an attestation not agreed", () => api.POST("/v1/merchants/{id}/compliance/attest", { params: { path: { id: merchantId } }, body: { name: "Ada Lovelace", title: "Director", agreed: false } })],
  // @ts-expect-error a merchant's name cannot be removed
  ["a merchant's name set to null", () => api.PATCH("/v1/merchants/{id}", { params: { path: { id: merchantId } }, body: { name: null } })],
];

// The same shapes, valid: they type-check, and the server takes them.
const accepted: [string, () => Answer][] = [
  ["an auth with a card", () => api.POST("/v1/transactions", { body: { type: "auth", merchantId, amount: 1000, payment: card } })],
  ["a merchant", () => api.POST("/v1/merchants", { body: { name: "Corner Bakery" } })],
  ["a single-use token", () => api.POST("/v1/tokens", { body: { payment: { number: card.number, expiration: card.expiration } } })],
];

let failed = 0;
for (const [what, call] of refused) {
  const { response } = await call();
  if (response.status !== 400) {
    console.error(`${what}: answered ${response.status}, not 400`);
    failed += 1;
  }
}
for (const [what, call] of accepted) {
  const { response } = await call();
  if (response.status >= 300) {
    console.error(`${what}: answered ${response.status}`);
    failed += 1;
  }
}
console.log(`${refused.length} refused and ${accepted.length} accepted calls checked, ${failed} wrong`);
process.exitCode = failed === 0 ? 0 : 1;
