-- A token made from a wallet's token names the wallet (its cryptogram is sealed with the card).
ALTER TABLE tokens ADD COLUMN wallet TEXT CHECK (wallet IN ('apple_pay', 'google_pay'));
