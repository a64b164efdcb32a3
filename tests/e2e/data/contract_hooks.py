"""Schemathesis hooks for the contract test (tests/e2e/tests/contract.rs).

The positive-data check sends requests the document says are valid and expects them accepted.
A schema cannot say which ids exist, so a generated valid request names resources that are
not there; nor can it compute a Luhn check digit, know today's date, say that two query
parameters exclude each other (`startingAfter`, `endingBefore`), or portably exclude the
invisible format characters above the Basic Multilingual Plane that names refuse. These hooks
make the valid requests valid in those ways only, and only for positive cases: they put in the
ids of resources the test made (HOLDFAST_CONTRACT_* variables), the check digit, a year not
past, and an `x` for such a character. Nor can a schema say that one field is at most another
(a loan's fee at most its advance, its minimum at most the total), or that a merchant has one
open loan at a time: a valid offer gets those bounds, and a merchant of its own, made for it.
Every other byte is the generator's, so a rule the document leaves out still fails the check.

A wallet's token is signed by Google or Apple for this gateway: nothing generated can be one,
so valid wallet requests are left out here; the wallet e2e tests send real signed tokens.
"""

import datetime
import os
import unicodedata
import uuid

import requests
import schemathesis


def env(name):
    return os.environ["HOLDFAST_CONTRACT_" + name]


def fresh_merchant():
    """A new merchant of the test's platform, for a loan offer of its own."""
    reply = requests.post(
        env("BASE_URL") + "/v1/merchants",
        headers={"x-api-key": env("PRIVATE_KEY"), "idempotency-key": "contract-" + uuid.uuid4().hex},
        json={"name": "Borrower"},
        timeout=10,
    )
    reply.raise_for_status()
    return reply.json()["id"]


def bound_loan_terms(body):
    """A valid number may come as an integral float (`5.0`): each bound keeps its type."""
    number = (int, float)
    advance, fee = body.get("advance"), body.get("fee")
    if isinstance(advance, number) and isinstance(fee, number) and fee > advance:
        body["fee"] = type(fee)(advance)
        fee = body["fee"]
    minimum = body.get("minimumPer30Days")
    if isinstance(minimum, number) and isinstance(advance, number) and isinstance(fee, number):
        body["minimumPer30Days"] = type(minimum)(min(minimum, advance + fee))


def is_positive(case):
    meta = getattr(case, "meta", None)
    return meta is not None and meta.generation.mode.is_positive


def operation(case):
    return (case.operation.method.upper(), case.operation.path)


def luhn_completed(number):
    """`number` with its last digit replaced by the Luhn check digit."""
    body = number[:-1]
    total = 0
    for i, digit in enumerate(reversed(body)):
        d = int(digit)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return body + str((10 - total % 10) % 10)


def not_past(expiration):
    """`MMYY` with a year after this one, the month kept."""
    year = (datetime.datetime.now(datetime.timezone.utc).year + 1) % 100
    return expiration[:2] + "%02d" % max(int(expiration[2:]), year)


def fix_card(card):
    if isinstance(card, dict):
        if isinstance(card.get("number"), str) and card["number"].isdigit():
            card["number"] = luhn_completed(card["number"])
        if isinstance(card.get("expiration"), str) and len(card["expiration"]) == 4:
            card["expiration"] = not_past(card["expiration"])


@schemathesis.hook
def filter_case(context, case):
    if not is_positive(case) or not isinstance(case.body, dict):
        return True
    return "wallet" not in case.body


@schemathesis.hook
def before_call(context, case, kwargs):
    """Every phase's requests pass here, the examples' too, just before they are sent."""
    if is_positive(case):
        make_valid(case)


def visible_above_the_bmp(value):
    """`value` with each format character above the Basic Multilingual Plane (tags, musical
    symbols' formatting) made an `x`. The names' rule refuses them, and a portable pattern
    cannot say so (ECMA-262 without its `u` flag sees surrogate halves): the description
    does. Walks lists and objects."""
    if isinstance(value, str):
        return "".join(
            "x" if ord(c) > 0xFFFF and unicodedata.category(c) == "Cf" else c for c in value
        )
    if isinstance(value, list):
        return [visible_above_the_bmp(v) for v in value]
    if isinstance(value, dict):
        return {k: visible_above_the_bmp(v) for k, v in value.items()}
    return value


def make_valid(case):
    for part in ("query", "path_parameters", "headers"):
        values = getattr(case, part, None)
        if isinstance(values, dict):
            for name in list(values):
                values[name] = visible_above_the_bmp(values[name])
    if isinstance(case.body, (dict, list)):
        case.body = visible_above_the_bmp(case.body)
    # Two query parameters that exclude each other cannot be said in OpenAPI; the document's
    # description of `endingBefore` says it, and a valid request keeps `startingAfter`.
    query = case.query or {}
    if "startingAfter" in query and "endingBefore" in query:
        del query["endingBefore"]
    # A client makes a new key for each new request: a generator's "0" sent again with another
    # body would be refused as the reuse it is (409), and hide what the body itself would get.
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() == "idempotency-key":
            headers[name] = "contract-" + uuid.uuid4().hex
    body = case.body if isinstance(case.body, dict) else None
    method, path = operation(case)
    if body is not None:
        if "merchantId" in body:
            body["merchantId"] = env("MERCHANT")
        if path == "/v1/transactions" and method == "POST":
            kind = body.get("type")
            payment = body.get("payment")
            if isinstance(payment, dict):
                if "token" in payment:
                    payment["token"] = env("VAULT_TOKEN")
                fix_card(payment)
            if kind in ("capture", "void"):
                body["transactionId"] = env("AUTH")
            elif kind == "refund":
                body["transactionId"] = env("SALE")
        if path == "/v1/tokens" and method == "POST":
            fix_card(body.get("payment"))
            if "clientSecret" in body:
                body["clientSecret"] = env("CLIENT_SECRET")
        if path == "/v1/client-sessions" and method == "POST" and "currency" in body:
            body["currency"] = env("CURRENCY")
        if path == "/v1/plans" and method == "POST":
            body["defaultConnectionId"] = env("CONNECTION")
            if isinstance(body.get("brandRoutes"), dict):
                body["brandRoutes"] = {brand: env("CONNECTION") for brand in body["brandRoutes"]}
            if isinstance(body.get("fallbacks"), list):
                body["fallbacks"] = [env("CONNECTION") for _ in body["fallbacks"]]
        if path == "/v1/processor-connections" and method == "POST":
            adyen = body.get("adyen")
            if isinstance(adyen, dict) and "checkoutUrl" in adyen:
                # The key is a test key: test mode takes Adyen's test URL only.
                adyen["checkoutUrl"] = "https://checkout-test.adyen.com/v71"
        if path == "/v1/payouts" and method == "POST":
            # A merchant with money available, paid out a cent at a time so it never runs out.
            body["merchantId"] = env("FUNDED_MERCHANT")
            body["amount"] = 1
            if "currency" in body:
                body["currency"] = env("CURRENCY")
        if path == "/v1/loans" and method == "POST":
            body["merchantId"] = fresh_merchant()
            bound_loan_terms(body)
        if path == "/v1/merchants/{id}" and method == "PATCH" and body.get("planId") is not None:
            body["planId"] = env("PLAN")
