-- One wallet payment (Google's messageId, Apple's transactionId) makes one token, never two.
CREATE TABLE wallet_payments (
    wallet     TEXT NOT NULL CHECK (wallet IN ('apple_pay', 'google_pay')),
    message_id TEXT NOT NULL,
    seen_on    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (wallet, message_id)
);
-- The merchant a wallet payment was requested for (Google Pay's gatewayMerchantId): a payment
-- with the token must be for that merchant.
ALTER TABLE tokens ADD COLUMN merchant_id TEXT;
