-- Where each merchant stands in onboarding (docs/onboarding.md). Merchants made before
-- onboarding existed were already being paid: they are approved. New ones start not_started.
ALTER TABLE merchants ADD COLUMN onboarding_status TEXT NOT NULL DEFAULT 'not_started';
UPDATE merchants SET onboarding_status = 'approved';
