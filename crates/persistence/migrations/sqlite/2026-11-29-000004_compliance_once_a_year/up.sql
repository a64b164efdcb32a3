-- One form per merchant and issue date: a yearly form is issued on the anniversary of the last,
-- so two maintainers running at once issue it once.
CREATE UNIQUE INDEX compliance_forms_issue_idx ON compliance_forms (platform_id, mode, merchant_id, issued_on);
