DROP TABLE compliance_forms;
ALTER TABLE merchants DROP COLUMN raw_cards_on;
