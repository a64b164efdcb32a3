-- compliance_forms_issue_idx (unique, from 2026-11-29-000004_compliance_once_a_year) has exactly
-- the columns of compliance_forms_merchant_idx: one index serves both the reads and the rule, at
-- half the writes.
DROP INDEX compliance_forms_merchant_idx;
