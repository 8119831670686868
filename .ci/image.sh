#!/usr/bin/env bash
# Builds the local Docker image that CI uses for the integration tests in docker mode:
# a Debian bookworm minbase root filesystem (debootstrap from this machine's configured Debian
# mirror) with redis-server, etcd-server (3.4) and ZooKeeper's jars with a headless JRE.
# The image has no CMD/ENTRYPOINT: the integration harness passes explicit commands.
# Idempotent: does nothing when the image already exists. Prints how long it took.
#
# Usage: .ci/image.sh [IMAGE]   (default bulwark-it:bookworm; also BULWARK_IT_IMAGE_NAME)
set -euo pipefail

image="${1:-${BULWARK_IT_IMAGE_NAME:-bulwark-it:bookworm}}"
start=$(date +%s)
say() { echo "image.sh: $* ($(( $(date +%s) - start ))s)"; }

if docker image inspect "$image" >/dev/null 2>&1; then
	say "$image already exists, nothing to do"
	exit 0
fi

# The Debian mirror this machine already uses (deb822 .sources or one-line .list files).
mirror="${BULWARK_IT_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		m=$(awk '
			/^URIs:/ { uri = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") ok = 1 }
			/^$/ { if (ok && uri != "" && !done) { print uri; done = 1 } uri = ""; ok = 0 }
			END { if (ok && uri != "" && !done) print uri }' "$f")
		if [ -n "$m" ]; then mirror="$m"; break; fi
	done
fi
if [ -z "$mirror" ]; then
	mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" && $3 == "bookworm" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' || true)
fi
if [ -z "$mirror" ]; then
	echo "image.sh: no bookworm mirror found in /etc/apt/sources.list*; set BULWARK_IT_DEBIAN_MIRROR" >&2
	exit 1
fi
say "building $image from $mirror"

command -v debootstrap >/dev/null || { echo "image.sh: debootstrap missing (run .ci/deps.sh)" >&2; exit 1; }

root=$(mktemp -d /var/tmp/bulwark-it-root.XXXXXX)
cleanup() {
	umount "$root/proc" 2>/dev/null || true
	rm -rf --one-file-system "$root"
}
trap cleanup EXIT

debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
	{ tail -n 50 "$root.debootstrap.log" >&2; rm -f "$root.debootstrap.log"; exit 1; }
rm -f "$root.debootstrap.log"
say "debootstrap done"

mount -t proc proc "$root/proc"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -ec '
	apt-get update -q
	apt-get install -y -q --no-install-recommends \
		redis-server etcd-server libzookeeper-java openjdk-17-jre-headless
	apt-get clean
	rm -rf /var/lib/apt/lists/*
' >"$root/../$(basename "$root").apt.log" 2>&1 ||
	{ tail -n 50 "$root/../$(basename "$root").apt.log" >&2; exit 1; }
rm -f "$root/../$(basename "$root").apt.log"
umount "$root/proc"
say "packages installed"

tar -C "$root" -c . | docker import - "$image" >/dev/null
say "imported $image ($(docker image inspect --format '{{.Size}}' "$image") bytes)"
