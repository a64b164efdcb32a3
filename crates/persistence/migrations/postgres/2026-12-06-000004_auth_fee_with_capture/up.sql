-- An auth moves no money (issue 41): its fee is collected with its capture, in the capture's
-- charge, so an auth and its capture post what a sale posts, and an auth voided or never
-- captured charges nothing (docs/money.md). The ledger's first migration and the builds
-- before this one posted an auth's fee on its own when it was approved: those journals are
-- withdrawn and each capture's charge takes its auth's fee. The processor's receivable, the
-- gross, stands; the merchant's and the platform's entries are posted again.
DELETE FROM ledger_entries WHERE kind = 'auth_fee';

CREATE TEMPORARY TABLE recharged AS
SELECT r.source_id, p.purpose, r.platform_id, r.mode, r.merchant_id, r.currency, r.posted_on,
       CASE p.purpose
         WHEN 'merchant_pending' THEN c.fee + a.fee - r.amount
         ELSE -(c.fee + a.fee)
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
