-- Adds to the processed and failures counters. ARGV: P, processed, failures, day.
count('processed', ARGV[2], ARGV[4])
count('failures', ARGV[3], ARGV[4])
return 1
