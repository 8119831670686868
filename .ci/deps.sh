#!/usr/bin/env bash
# Installs with apt what the integration tests need on a Debian bookworm machine:
# local mode: redis-server, ZooKeeper's jars (libzookeeper-java) and a headless JRE;
# the docker-mode image build: debootstrap; loopback-only runs: iproute2 (ip, for unshare -n);
# the admin page's browser test: chromium (driven headless by chromedp).
# Idempotent: installs only what is missing. Prints how long it took.
set -euo pipefail

start=$(date +%s)
say() { echo "deps.sh: $* ($(( $(date +%s) - start ))s)"; }

want=(redis-server libzookeeper-java debootstrap iproute2 chromium)
if ! java -version >/dev/null 2>&1; then
	want+=(openjdk-17-jre-headless)
fi

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	say "all present: ${want[*]}"
	exit 0
fi

say "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/bulwark-deps.log 2>&1; then
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/bulwark-deps.log 2>&1 ||
		{ tail -n 30 /tmp/bulwark-deps.log >&2; exit 1; }
fi
# redis-server's package may start a system service; the tests always start their own.
say "installed ${missing[*]}"
