#!/usr/bin/env bash
# Builds the Nacos-protocol test server (PolarisMesh v1.18.1, a Go server that speaks the Nacos v1
# HTTP and v2 gRPC config protocol) and a local Docker image that runs it.
#
#   1. the binary, from the tools module internal/integration/tools/polaris (Go module proxy only) by its
#      build.sh, which fixes Polaris' compare-and-set publish at build time, into
#      ${BULWARK_POLARIS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/bulwark/polaris-server-v1.18.1}
#      (the path the integration harness looks at in local mode); about 5 min cold on 2 cores;
#   2. the image bulwark-nacos:polaris-v1.18.1-casfix (also BULWARK_POLARIS_IMAGE): FROM bulwark-it:bookworm
#      (made by .ci/image.sh) with the binary and internal/integration/testdata/nacos/polaris-server.yaml;
#      it listens on 8848 (HTTP) and 9848 (gRPC) like the official Nacos image.
#      Skipped with POLARIS_SKIP_IMAGE=1 or when Docker is not available.
#
# Idempotent: an existing binary or image is kept (delete it to rebuild). Prints how long it took.
set -euo pipefail

version=v1.18.1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="${BULWARK_POLARIS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/bulwark/polaris-server-$version-casfix}"
image="${BULWARK_POLARIS_IMAGE:-bulwark-nacos:polaris-$version-casfix}"
base="${BULWARK_IT_IMAGE_BASE:-bulwark-it:bookworm}"
start=$(date +%s)
say() { echo "polaris.sh: $* ($(( $(date +%s) - start ))s)"; }

if [ -x "$bin" ]; then
	say "binary $bin already exists"
else
	say "building $bin"
	mkdir -p "$(dirname "$bin")"
	"$repo/internal/integration/tools/polaris/build.sh" "$bin"
	say "built $bin ($(stat -c %s "$bin") bytes)"
fi

if [ "${POLARIS_SKIP_IMAGE:-0}" = 1 ]; then
	say "image skipped (POLARIS_SKIP_IMAGE=1)"
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
	echo "polaris.sh: base image $base missing (run .ci/image.sh first)" >&2
	exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp "$bin" "$ctx/polaris-server"
cp "$repo/internal/integration/testdata/nacos/polaris-server.yaml" "$ctx/polaris-server.yaml"
cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $base
LABEL org.bulwark-go.nacos-server="polaris-$version"
COPY polaris-server /usr/local/bin/polaris-server
COPY polaris-server.yaml /etc/polaris/polaris-server.yaml
ENV BULWARK_POLARIS_LISTEN_IP=0.0.0.0 BULWARK_POLARIS_PORT=8848
# log/ and polaris.bolt are written relative to the working directory.
WORKDIR /var/lib/polaris
EXPOSE 8848 9848
CMD ["/usr/local/bin/polaris-server", "start", "-c", "/etc/polaris/polaris-server.yaml"]
DOCKERFILE
docker build -q -t "$image" "$ctx" >/dev/null
say "built image $image"
