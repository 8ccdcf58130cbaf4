#!/usr/bin/env bash
# squall's proxy against nginx, side by side in one run: each one's own CPU per forwarded
# request for the same 50-event upstream stream (BENCHMARKS.md, `proxy`). Installs nginx from
# the distribution's packages when it is missing (Debian's nginx-light; needs root) — CI does
# not run this. Then runs the by-hand proxy figures, which include the side-by-side when nginx
# is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nginx > /dev/null && [ ! -x /usr/sbin/nginx ]; then
  echo "proxy-vs-nginx: installing nginx-light from the distribution's packages"
  apt-get install -y -q nginx-light > /dev/null
  # The package starts the distribution's own server on port 80; the bench starts its own.
  (service nginx stop || pkill -x nginx || true) > /dev/null 2>&1
fi
cargo bench --bench squall -- --proxy
