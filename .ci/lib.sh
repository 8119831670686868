# shellcheck shell=bash
# What .ci/consul.sh and .ci/polaris.sh share: a test server's binary built from a tools module
# under internal/integration/tools into the cache the integration harness looks at in local
# mode, then a local Docker image FROM the base image (made by .ci/image.sh) that runs it.
# A script sources this file, then calls build_server.
#
# Every line it prints starts with the script's name and ends with the seconds since it was
# sourced.

# The folder the harness looks for server binaries in (XDG_CACHE_HOME, else ~/.cache).
# shellcheck disable=SC2034 # used by the scripts that source this file
cache="${XDG_CACHE_HOME:-$HOME/.cache}/bulwark"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base="${BULWARK_IT_IMAGE_BASE:-bulwark-it:bookworm}"
start=$(date +%s)
say() { echo "$(basename "$0"): $* ($(($(date +%s) - start))s)"; }

# build_server TOOL BIN IMAGE SKIP_VAR FILL
#
# Builds BIN with internal/integration/tools/TOOL/build.sh unless it exists, then IMAGE unless
# it exists, the variable named SKIP_VAR is 1, or no Docker daemon answers. FILL is a function
# that writes the image's build context: it is called with the context's folder and writes
# there the Dockerfile (FROM $base) and the files it copies, BIN among them. Idempotent: delete
# the binary or the image to rebuild it.
build_server() {
	local tool=$1 bin=$2 image=$3 skip_var=$4 fill=$5
	if [ -x "$bin" ]; then
		say "binary $bin already exists"
	else
		say "building $bin"
		mkdir -p "$(dirname "$bin")"
		"$repo/internal/integration/tools/$tool/build.sh" "$bin"
		say "built $bin ($(stat -c %s "$bin") bytes)"
	fi

	if [ "${!skip_var:-0}" = 1 ]; then
		say "image skipped ($skip_var=1)"
		return 0
	fi
	if ! command -v docker >/dev/null || ! docker info >/dev/null 2>&1; then
		say "no Docker daemon: image $image not built"
		return 0
	fi
	if docker image inspect "$image" >/dev/null 2>&1; then
		say "image $image already exists"
		return 0
	fi
	if ! docker image inspect "$base" >/dev/null 2>&1; then
		echo "$(basename "$0"): base image $base missing (run .ci/image.sh first)" >&2
		return 1
	fi

	# Global, not local: the EXIT trap runs after this function has returned.
	build_context=$(mktemp -d)
	trap 'rm -rf "$build_context"' EXIT
	"$fill" "$build_context"
	docker build -q -t "$image" "$build_context" >/dev/null
	say "built image $image"
}
