-- compliance_forms_issue_idx (unique, the previous migration) has exactly the columns of
-- compliance_forms_merchant_idx: one index serves both the reads and the rule, at half the writes.
DROP INDEX compliance_forms_merchant_idx;
