#!/usr/bin/env bash
# Builds the Consul test server and a local Docker image that runs it.
#
#   1. the binary, from the tools module internal/integration/tools/consul (Go module proxy only) by its
#      build.sh, into ${BULWARK_CONSUL_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/bulwark/consul-v1.14.11}
#      (the path the integration harness looks at in local mode); about 9 CPU-minutes cold;
#   2. the image bulwark-consul:v1.14.11 (also BULWARK_CONSUL_IMAGE): FROM bulwark-it:bookworm (made by
#      .ci/image.sh) with the binary in /usr/local/bin/consul; the harness runs it as a dev agent.
#      Skipped with CONSUL_SKIP_IMAGE=1 or when Docker is not available.
#
# Idempotent: an existing binary or image is kept (delete it to rebuild). Prints how long it took.
set -euo pipefail

version=v1.14.11
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="${BULWARK_CONSUL_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/bulwark/consul-$version}"
image="${BULWARK_CONSUL_IMAGE:-bulwark-consul:$version}"
base="${BULWARK_IT_IMAGE_BASE:-bulwark-it:bookworm}"
start=$(date +%s)
say() { echo "consul.sh: $* ($(( $(date +%s) - start ))s)"; }

if [ -x "$bin" ]; then
	say "binary $bin already exists"
else
	say "building $bin"
	mkdir -p "$(dirname "$bin")"
	"$repo/internal/integration/tools/consul/build.sh" "$bin"
	say "built $bin ($(stat -c %s "$bin") bytes)"
fi

if [ "${CONSUL_SKIP_IMAGE:-0}" = 1 ]; then
	say "image skipped (CONSUL_SKIP_IMAGE=1)"
	exit 0
fi
if ! command -v docker >/dev/null || ! docker info >/dev/null 2>&1; then
	say "no Docker daemon: image $image not built"
	exit 0
fi
if docker image inspect "$image" >/dev/null 2>&1; then
	say "image $image already exists"
	exit 0
fi
if ! docker image inspect "$base" >/dev/null 2>&1; then
	echo "consul.sh: base image $base missing (run .ci/image.sh first)" >&2
	exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp "$bin" "$ctx/consul"
cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $base
LABEL org.bulwark-go.consul-server="$version"
COPY consul /usr/local/bin/consul
WORKDIR /tmp
EXPOSE 8500
CMD ["/usr/local/bin/consul", "agent", "-dev", "-client", "0.0.0.0"]
DOCKERFILE
docker build -q -t "$image" "$ctx" >/dev/null
say "built image $image"
