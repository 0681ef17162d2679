-- Releases the unique lock a job holds. ARGV: P, jid. Returns 1.
release_unique(ARGV[2])
return 1
