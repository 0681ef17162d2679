-- Releases the unique lock a job holds (#13). ARGV: P, jid. Returns 1.
release_unique(ARGV[2])
return 1
