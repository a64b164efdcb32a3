ALTER TABLE tokens DROP COLUMN merchant_id;
DROP TABLE wallet_payments;
