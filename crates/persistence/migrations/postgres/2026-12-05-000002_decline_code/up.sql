-- Why a card was declined, in the API's one vocabulary whatever the processor (a processor's own
-- codes differ: Adyen's refusal reason 12 is the sandbox's ISO 8583 code 51). Declines recorded
-- before this column get the word their ISO code always gave them.
ALTER TABLE transactions ADD COLUMN decline_code TEXT;
UPDATE transactions SET decline_code = CASE processor_code
    WHEN '05' THEN 'do_not_honor'
    WHEN '51' THEN 'insufficient_funds'
    WHEN '41' THEN 'lost_card'
    WHEN '43' THEN 'stolen_card'
    WHEN '54' THEN 'expired_card'
    ELSE 'generic_decline' END
 WHERE status = 'D';
