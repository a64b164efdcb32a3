-- Days of history, as a database in production holds, for the load scripts' HISTORY=rows:
-- :rows approved auths of the first merchant, each with its stored answer, its event and one
-- notification per subscription already in the database, delivered; spread over the last 14
-- days (inside the 15 days the history is kept, so none archived). Then VACUUM ANALYZE, so the
-- planner works from statistics that count almost nothing pending. A bench started on an empty
-- database cannot show a plan that reads a pending rows' index whole: it is cheap there.
--   psql "$url" -v rows=250000 -f bench/history.sql
-- Ids sort before the ULIDs Holdfast issues, as older rows' do.
CREATE TEMPORARY TABLE history AS
SELECT lpad(g::text, 12, '0') AS n,
       now() - interval '14 days' * (1 - g::float8 / :rows) AS at,
       m.id AS merchant_id, m.platform_id, m.mode
FROM generate_series(1, :rows) AS g, (SELECT * FROM merchants ORDER BY id LIMIT 1) AS m;

INSERT INTO transactions (id, platform_id, mode, merchant_id, kind, state, amount, currency, fee,
    created_on, bin, brand, last4, funding, plan_id, plan_name, connection_id, connection_name,
    approved_amount, avs, cvv, partial, processor_code, processor_message,
    processor_transaction_id, status, parent_id, refunded_amount)
SELECT 'txn_00' || n, platform_id, mode, merchant_id, 'auth', 'authorized', 1000, 'USD', 30, at,
       '411111', 'visa', '1111', 'credit', 'plan_history', 'Default plan', 'midCon_history',
       'Sandbox', 1000, 'Y', 'M', false, '00', 'Approved', 'sbx_00' || n, 'A', NULL, 0
FROM history;

INSERT INTO idempotency_keys (platform_id, mode, key, fingerprint, created_on, status, body)
SELECT platform_id, mode, 'history-' || n, '\x00', at, 201, '{"id":"txn_00' || n || '"}'
FROM history;

INSERT INTO events (id, platform_id, mode, event_type, data, created_on, subject_id)
SELECT 'evt_00' || n, platform_id, mode, 'transaction.created',
       '{"id":"txn_00' || n || '","amount":1000,"state":"authorized"}', at, 'txn_00' || n
FROM history;

INSERT INTO notifications (id, webhook_id, platform_id, mode, event_id, event_type, state,
                           due_on, endpoint_url, request_body, response, requests, attempted_on,
                           created_on)
SELECT 'ntf_00' || h.n || substr(w.id, 4), w.id, h.platform_id, h.mode, 'evt_00' || h.n,
       'transaction.created', 'succeeded', h.at, w.endpoint_url, '{}', '{"status":204}', 1,
       h.at + interval '5 milliseconds', h.at
FROM history AS h JOIN webhooks AS w ON w.platform_id = h.platform_id AND w.mode = h.mode;

VACUUM ANALYZE transactions, idempotency_keys, events, notifications;
