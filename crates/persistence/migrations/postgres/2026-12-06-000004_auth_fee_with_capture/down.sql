-- The auths' fees go back to journals of their own, posted when they were approved; the
-- captures' charges keep only their own fee.
CREATE TEMPORARY TABLE recharged AS
SELECT r.source_id, p.purpose, r.platform_id, r.mode, r.merchant_id, r.currency, r.posted_on,
       CASE p.purpose
         WHEN 'merchant_pending' THEN c.fee - r.amount
         ELSE -c.fee
       END AS amount
  FROM ledger_entries r
  JOIN transactions c ON c.id = r.source_id AND c.kind = 'capture'
  JOIN transactions a ON a.id = c.parent_id AND a.kind = 'auth' AND a.fee > 0
 CROSS JOIN (SELECT 'merchant_pending' AS purpose UNION ALL SELECT 'platform_fees') p
 WHERE r.kind = 'charge' AND r.purpose = 'processor_receivable';

DELETE FROM ledger_entries
 WHERE kind = 'charge' AND purpose IN ('merchant_pending', 'platform_fees')
   AND source_id IN (SELECT source_id FROM recharged);

INSERT INTO ledger_entries
       (source_id, kind, purpose, platform_id, mode, merchant_id, currency, amount, posted_on)
SELECT source_id, 'charge', purpose, platform_id, mode, merchant_id, currency, amount, posted_on
  FROM recharged
 WHERE amount <> 0;

DROP TABLE recharged;

INSERT INTO ledger_entries
       (source_id, kind, purpose, platform_id, mode, merchant_id, currency, amount, posted_on)
SELECT t.id, 'auth_fee', p.purpose, t.platform_id, t.mode, t.merchant_id, t.currency,
       CASE p.purpose WHEN 'merchant_pending' THEN t.fee ELSE -t.fee END, t.created_on
  FROM transactions t
 CROSS JOIN (SELECT 'merchant_pending' AS purpose UNION ALL SELECT 'platform_fees') p
 WHERE t.kind = 'auth' AND t.state IN ('authorized', 'closing', 'captured', 'voided')
   AND t.fee > 0;
