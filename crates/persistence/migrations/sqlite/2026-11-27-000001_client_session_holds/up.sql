-- While a payment with one of its tokens runs, the session is held for it until then: no other
-- payment and no cancel can take it meanwhile. A hold that outlives its payment (the process
-- died) lapses at this time.
ALTER TABLE client_sessions ADD COLUMN held_until TEXT;
