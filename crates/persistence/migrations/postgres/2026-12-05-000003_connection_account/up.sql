-- The account a processor connection reaches (Adyen's merchant account, its Checkout URL, its
-- secrets sealed by the vault), as JSON; NULL for the sandbox, which has nothing to keep.
ALTER TABLE processor_connections ADD COLUMN account TEXT;
