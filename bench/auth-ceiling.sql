-- pgbench: the SQL an approved auth costs holdfast on PostgreSQL, statement for statement (read
-- off `log_statement = all` for one POST /v1/transactions), without HTTP, Rust or the processor.
-- Its throughput is the ceiling the API is measured against. Variables come from
-- bench/transactions.sh: :hash (a key hash, hex), :pfm, :mid, :plan, :con.
\set n random(1, 9000000000000000)
SELECT id, platform_id, name, key_type, mode, value_hash, last4, active, created_by, created_on, last_used_on
  FROM api_keys WHERE value_hash = decode(:hash, 'hex') LIMIT 1;
INSERT INTO idempotency_keys (platform_id, mode, key, fingerprint, created_on)
  VALUES (:pfm, 'test', 'pgb-' || :n, decode(:hash, 'hex'), now()) ON CONFLICT DO NOTHING;
SELECT id, platform_id, mode, name, currency, email, created_on, updated_on, deleted_on, plan_id
  FROM merchants WHERE platform_id = :pfm AND mode = 'test' AND id = :mid AND deleted_on IS NULL LIMIT 1;
SELECT id, platform_id, mode, name, fee_basis_points, fee_fixed, default_connection_id, brand_routes, fallbacks, is_default, created_on
  FROM plans WHERE platform_id = :pfm AND mode = 'test' AND is_default LIMIT 1;
SELECT id, platform_id, mode, name, kind, created_on
  FROM processor_connections WHERE platform_id = :pfm AND mode = 'test' AND id = :con LIMIT 1;
INSERT INTO transactions (id, platform_id, mode, merchant_id, kind, state, amount, currency, fee, created_on,
    bin, brand, last4, funding, plan_id, plan_name, connection_id, connection_name, approved_amount, avs, cvv,
    partial, processor_code, processor_message, processor_transaction_id, status, parent_id, refunded_amount)
  VALUES ('txn_pgb' || :n, :pfm, 'test', :mid, 'auth', 'pending', 1000, 'USD', 0, now(),
    '411111', 'visa', '1111', 'credit', :plan, 'Default plan', :con, 'Sandbox', 0, '', '',
    false, '', '', '', '', NULL, 0);
BEGIN;
UPDATE transactions SET state = 'authorized', fee = 30, connection_id = :con, connection_name = 'Sandbox',
    approved_amount = 1000, avs = 'Y', cvv = 'M', partial = false, processor_code = '00',
    processor_message = 'Approved', processor_transaction_id = 'sbx_pgb' || :n, status = 'A'
  WHERE id = 'txn_pgb' || :n AND state = 'pending';
INSERT INTO events (id, platform_id, mode, event_type, data, created_on)
  VALUES ('evt_pgb' || :n, :pfm, 'test', 'transaction.created', repeat('x', 700), now());
SELECT id, events FROM webhooks WHERE platform_id = :pfm AND mode = 'test' AND active;
END;
UPDATE idempotency_keys SET status = 201, body = repeat('x', 700)
  WHERE platform_id = :pfm AND mode = 'test' AND key = 'pgb-' || :n;
