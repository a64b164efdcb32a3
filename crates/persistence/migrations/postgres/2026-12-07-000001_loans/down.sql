DROP TABLE loan_repayments;
DROP TABLE loans;
DELETE FROM ledger_journals
 WHERE kind IN ('loan_advance', 'loan_withholding', 'loan_repayment', 'loan_charge_off');
ALTER TABLE ledger_journals DROP CONSTRAINT ledger_journals_sum_to_zero;
ALTER TABLE ledger_journals
    DROP COLUMN loan_receivable, DROP COLUMN loan_fees, DROP COLUMN platform_funding;
ALTER TABLE ledger_journals ADD CONSTRAINT ledger_journals_sum_to_zero CHECK (
    merchant_pending + merchant_available + merchant_in_transit + platform_fees
      + processor_receivable = 0);
