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
# The steps are .ci/lib.sh's build_server, which .ci/polaris.sh shares.
set -euo pipefail
# shellcheck source=.ci/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

version=v1.14.11
bin="${BULWARK_CONSUL_BIN:-$cache/consul-$version}"
image="${BULWARK_CONSUL_IMAGE:-bulwark-consul:$version}"

# fill writes the image's build context into the folder $1.
fill() {
	cp "$bin" "$1/consul"
	cat >"$1/Dockerfile" <<DOCKERFILE
FROM $base
LABEL org.bulwark-go.consul-server="$version"
COPY consul /usr/local/bin/consul
WORKDIR /tmp
EXPOSE 8500
CMD ["/usr/local/bin/consul", "agent", "-dev", "-client", "0.0.0.0"]
DOCKERFILE
}

build_server consul "$bin" "$image" CONSUL_SKIP_IMAGE fill
