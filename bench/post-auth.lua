-- wrk script: POST /v1/transactions, an auth (or HOLDFAST_TYPE, a sale) on the always-approved
-- Visa test card, each request with an Idempotency-Key of its own (as a careful client sends).
-- Needs HOLDFAST_KEY, HOLDFAST_MERCHANT and HOLDFAST_RUN (unique per run).
local counter = 0
local threads = 0

-- Runs in the main state: hand each thread a number, so keys never repeat across threads.
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

function request()
  counter = counter + 1
  local body = '{"merchantId": "' .. os.getenv("HOLDFAST_MERCHANT") .. '", "type": "' .. (os.getenv("HOLDFAST_TYPE") or "auth") .. '", '
    .. '"amount": 1000, "payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}'
  return wrk.format("POST", "/v1/transactions", {
    ["content-type"] = "application/json",
    ["x-api-key"] = os.getenv("HOLDFAST_KEY"),
    ["idempotency-key"] = "bench-" .. os.getenv("HOLDFAST_RUN") .. "-" .. thread_id .. "-" .. counter,
  }, body)
end
