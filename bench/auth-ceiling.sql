-- pgbench: the SQL an approved auth costs holdfast on PostgreSQL, statement for statement (read
-- off `log_statement = all` for one POST /v1/transactions with an Idempotency-Key), without
-- HTTP, Rust or the processor. Its throughput is the ceiling the API is measured against.
-- Variables come from bench/transactions.sh: :hash (a key hash, hex), :pfm, :mid.
\set n random(1, 9000000000000000)
-- 1. The API key.
SELECT id, platform_id, name, key_type, mode, value_hash, last4, active, created_by, created_on, last_used_on
  FROM api_keys WHERE value_hash = decode(:hash, 'hex') LIMIT 1;
-- 2. The merchant, its plan, the plan's routes and the connections it names, in one read.
SELECT m.*, p.*, r.*, c.*
  FROM merchants m
  LEFT JOIN plans p ON p.platform_id = m.platform_id AND p.mode = m.mode
                   AND (m.plan_id = p.id OR (m.plan_id IS NULL AND p.is_default))
  LEFT JOIN plan_routes r ON r.plan_id = p.id
  LEFT JOIN processor_connections c ON c.platform_id = m.platform_id AND c.mode = m.mode
                   AND (c.id = p.default_connection_id OR c.id = r.connection_id)
 WHERE m.platform_id = :pfm AND m.mode = 'test' AND m.id = :mid AND m.deleted_on IS NULL;
-- 3. The idempotency claim and the pending row, one statement, before the processor call (its
-- own commit: a duplicate must see the claim, a crash must leave the row).
WITH claim AS (
    INSERT INTO idempotency_keys (platform_id, mode, key, fingerprint, created_on)
    VALUES (:pfm, 'test', 'pgb-' || :n, decode(:hash, 'hex'), now()) ON CONFLICT DO NOTHING RETURNING 1
)
INSERT INTO transactions (id, platform_id, mode, merchant_id, kind, state, amount, currency, fee, created_on,
    bin, brand, last4, funding, plan_id, plan_name, connection_id, connection_name, approved_amount, avs, cvv,
    partial, processor_code, processor_message, processor_transaction_id, status, parent_id, refunded_amount)
  SELECT 'txn_pgb' || :n, :pfm, 'test', :mid, 'auth', 'pending', 1000, 'USD', 0, now(),
    '411111', 'visa', '1111', 'credit', 'plan_x', 'Default plan', 'midCon_x', 'Sandbox', 0, 'U', 'P',
    false, '', 'pending', '', 'P', NULL, 0
    FROM claim;
-- 4. The completion: final row, event, fan-out, idempotent response and the journal's part,
-- which posts nothing for an auth (an auth moves no money), in one statement (its plain form:
-- an auth has no original to move and no client session to close).
WITH done AS (
    UPDATE transactions
       SET state = 'authorized', fee = 30, connection_id = 'midCon_x', connection_name = 'Sandbox',
           approved_amount = 1000, avs = 'Y', cvv = 'M', partial = false, processor_code = '00',
           processor_message = 'Approved', processor_transaction_id = 'sbx_pgb' || :n, status = 'A'
     WHERE id = 'txn_pgb' || :n AND state = (SELECT 'pending')
 RETURNING id, platform_id, mode
), event AS (
    INSERT INTO events (id, platform_id, mode, event_type, data, created_on, subject_id)
    SELECT 'evt_pgb' || :n, platform_id, mode, 'transaction.created', repeat('x', 700), now(), id FROM done
 RETURNING id, platform_id, mode, event_type, created_on
), fan_out AS (
    INSERT INTO notifications
           (id, webhook_id, platform_id, mode, event_id, event_type, state, due_on, created_on)
    SELECT 'ntf_' || substr(e.id, 5) || substr(w.id, 4), w.id, e.platform_id, e.mode, e.id,
           e.event_type, 'pending', e.created_on, e.created_on
      FROM event e
      JOIN webhooks w ON w.platform_id = e.platform_id AND w.mode = e.mode AND w.active
                     AND e.event_type = ANY (string_to_array(w.events, ','))
 RETURNING id
), reply AS (
    UPDATE idempotency_keys k
       SET status = 201, body = repeat('x', 700)
      FROM done
     WHERE k.platform_id = done.platform_id AND k.mode = done.mode AND k.key = 'pgb-' || :n
), journal AS (
    INSERT INTO ledger_journals
           (source_id, kind, platform_id, mode, merchant_id, currency, posted_on,
            merchant_pending, merchant_available, merchant_in_transit, platform_fees,
            processor_receivable)
    SELECT done.id, '', done.platform_id, done.mode, :mid, 'USD', now(), 0, 0, 0, 0, 0
      FROM done
     WHERE false
)
SELECT (SELECT count(*) FROM done), 0::bigint, 0::bigint, (SELECT count(*) FROM fan_out);
