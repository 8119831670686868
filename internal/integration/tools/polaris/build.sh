#!/usr/bin/env bash
# Builds PolarisMesh (pinned by this tools module) into the file named by $1, with one fix
# applied at build time: the pinned module is copied to a scratch directory, patched there by
# the sed below, and built through a temporary modfile that replaces the module with that copy.
# No Polaris source is kept in this repository.
#
# The fix: Polaris v1.18.1's Nacos v2 API drops the publish request's CasMd5 when it converts
# the request (ConfigPublishRequest.ToSpec in apiserver/nacosserver/v2/pb/config_request.go),
# then compares the stored md5 with "", so every compare-and-set publish of an existing config
# fails, even with the right md5. Copying CasMd5 into the request's Md5 field gives the
# compare-and-set semantics of real Nacos, which bulwark's Nacos write-back tests need.
set -euo pipefail

out=${1:?usage: build.sh OUTPUT}
cd "$(dirname "${BASH_SOURCE[0]}")"
export GOFLAGS=-mod=readonly CGO_ENABLED=0 GOWORK=off

dir=$(go mod download -json github.com/polarismesh/polaris |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work" "$out.tmp.$$"' EXIT
cp -r "$dir" "$work/polaris"
chmod -R u+w "$work/polaris"
file="$work/polaris/apiserver/nacosserver/v2/pb/config_request.go"
sed -i 's|^\t\tContent:   wrapperspb.String(c.Content),$|&\n\t\tMd5:       wrapperspb.String(c.CasMd5),|' "$file"
if ! grep -q 'Md5:       wrapperspb.String(c.CasMd5)' "$file"; then
	echo "build.sh: the CasMd5 fix no longer applies to $file" >&2
	exit 1
fi
cp go.mod go.sum "$work/"
go mod edit -modfile="$work/go.mod" -replace "github.com/polarismesh/polaris=$work/polaris"
go build -modfile="$work/go.mod" -trimpath -o "$out.tmp.$$" github.com/polarismesh/polaris
mv -f "$out.tmp.$$" "$out"
