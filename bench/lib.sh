# Helpers the bench/run.d scripts share (sourced: `. bench/lib.sh` from the repository's root).

# A TCP port free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The median of the space-separated numbers in $1 (the lower middle one of an even count).
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# CPU seconds (user + system) process $1 has used so far, from /proc/PID/stat.
bench_clk_tck="$(getconf CLK_TCK)"
cpu() { awk -v t="$bench_clk_tck" '{ sub(/^.*\) /, ""); printf "%.3f", ($12 + $13) / t }' "/proc/$1/stat"; }
