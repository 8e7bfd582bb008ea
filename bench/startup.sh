#!/usr/bin/env bash
# Start-up time and idle memory of the node program (a Release build):
#   - start-to-listening: the program logs "Start-up: listening X ms after main, set up after
#     Y ms" (main → first listening socket; → REST, metrics and the Messaging API serving);
#   - idle RSS: VmRSS of a relay node 3 s after start, no peer.
# Runs each configuration --runs times (default 20), alternating them, and prints one JSON line
# per configuration with the median and p90 of both times and the median RSS.
#   bash bench/startup.sh [build-rel/logosdelivery] [runs]
set -euo pipefail
bin=$(realpath "${1:-build-rel/logosdelivery}")
runs=${2:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
configs=("rest=false" "rest=true")
for ((i = 0; i < runs; i++)); do
  for c in "${configs[@]}"; do
    log=$work/$c.$i.log
    (cd "$work" && exec "$bin" --relay=true --cluster-id=42 --shard=0 --listen-address=127.0.0.1 --tcp-port=0 \
       --"$c" --rest-port=0 --log-level=INFO >"$log" 2>&1) &
    pid=$!
    for _ in $(seq 100); do grep -q 'Node setup complete' "$log" && break; sleep 0.05; done
    sleep 3
    awk '/^VmRSS/ {print $2}' /proc/$pid/status >>"$work/$c.rss"
    kill -TERM $pid; wait $pid || true
    sed -n 's/.*Start-up: listening \([0-9.]*\) ms after main, set up after \([0-9.]*\) ms.*/\1 \2/p' "$log" >>"$work/$c.times"
  done
done
for c in "${configs[@]}"; do
  python3 - "$c" "$work/$c.times" "$work/$c.rss" <<'PY'
import json, sys
name, times, rss = sys.argv[1], open(sys.argv[2]).read().split('\n'), open(sys.argv[3]).read().split()
t = [tuple(map(float, l.split())) for l in times if l.strip()]
def pct(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
listen, ready, r = [a for a, _ in t], [b for _, b in t], sorted(int(x) for x in rss)
print(json.dumps({"bench": "startup", "config": name, "runs": len(t),
  "listenMs": {"p50": pct(listen, 50), "p90": pct(listen, 90), "max": max(listen)},
  "setupMs": {"p50": pct(ready, 50), "p90": pct(ready, 90), "max": max(ready)},
  "idleRssMiB": round(r[len(r) // 2] / 1024, 2)}))
PY
done
