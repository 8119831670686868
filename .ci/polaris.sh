#!/usr/bin/env bash
# Builds the Nacos-protocol test server (PolarisMesh v1.18.1, a Go server that speaks the Nacos v1
# HTTP and v2 gRPC config protocol) and a local Docker image that runs it.
#
#   1. the binary, from the tools module internal/integration/tools/polaris (Go module proxy only) by its
#      build.sh, which fixes Polaris' compare-and-set publish at build time, into
#      ${BULWARK_POLARIS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/bulwark/polaris-server-v1.18.1-casfix}
#      (the path the integration harness looks at in local mode); about 5 min cold on 2 cores;
#   2. the image bulwark-nacos:polaris-v1.18.1-casfix (also BULWARK_POLARIS_IMAGE): FROM bulwark-it:bookworm
#      (made by .ci/image.sh) with the binary and internal/integration/testdata/nacos/polaris-server.yaml;
#      it listens on 8848 (HTTP) and 9848 (gRPC) like the official Nacos image.
#      Skipped with POLARIS_SKIP_IMAGE=1 or when Docker is not available.
#
# Idempotent: an existing binary or image is kept (delete it to rebuild). Prints how long it took.
# The steps are .ci/lib.sh's build_server, which .ci/consul.sh shares.
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version=v1.18.1
bin="${BULWARK_POLARIS_BIN:-$cache/polaris-server-$version-casfix}"
image="${BULWARK_POLARIS_IMAGE:-bulwark-nacos:polaris-$version-casfix}"

# fill writes the image's build context into the folder $1.
fill() {
	cp "$bin" "$1/polaris-server"
	cp "$repo/internal/integration/testdata/nacos/polaris-server.yaml" "$1/polaris-server.yaml"
	cat >"$1/Dockerfile" <<DOCKERFILE
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
}

build_server polaris "$bin" "$image" POLARIS_SKIP_IMAGE fill
