UPDATE transactions SET status = 'E' WHERE state = 'pending' AND status = 'P';
