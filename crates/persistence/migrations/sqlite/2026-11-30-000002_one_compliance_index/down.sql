CREATE INDEX compliance_forms_merchant_idx ON compliance_forms (platform_id, mode, merchant_id, issued_on);
