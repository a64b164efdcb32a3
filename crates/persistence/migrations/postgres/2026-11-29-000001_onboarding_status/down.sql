ALTER TABLE merchants DROP COLUMN onboarding_status;
