#!/usr/bin/env bash
# Builds a released version of Prefs from its commit, with the fixture writer of that release
# (Tests/Releases/VERSION/ReleaseFixtureWriter.swift) added as its executable `release-fixtures`, and prints the
# directory of the built products (release-fixtures, and that release's own prefs-tool and prefs-test-child).
#
#   Tests/Releases/build-release.sh VERSION DIRECTORY     e.g. 0.1 /tmp/prefs-0.1
#
# The release's tree is taken with `git archive` (no worktree, nothing in this checkout changes) into DIRECTORY/prefs
# and built there; a second run reuses that build. Used by make-fixtures.sh and by `prefs-torture --long`.
set -euo pipefail
version="$1"
directory="$2"
root="$(cd "$(dirname "$0")/../.." && pwd)"
case "$version" in
    0.1) commit=3b4463878ef395391020d24dfa020d038bddd44a ;;
    *) echo "build-release.sh: no commit known for release $version" >&2; exit 64 ;;
esac
tree="$directory/prefs"
if [ ! -f "$tree/.release-commit" ] || [ "$(cat "$tree/.release-commit")" != "$commit" ]; then
    rm -rf "$tree"
    mkdir -p "$tree"
    git -C "$root" archive --format=tar "$commit" | tar -x -C "$tree"
    cat >> "$tree/Package.swift" <<'SWIFT'

// Added by Tests/Releases/build-release.sh: the fixture writer, built against this release.
package.targets.append(.executableTarget(name: "release-fixtures", dependencies: ["Prefs", "DialogGate"]))
SWIFT
    echo "$commit" > "$tree/.release-commit"
fi
mkdir -p "$tree/Sources/release-fixtures"
cmp -s "$root/Tests/Releases/$version/ReleaseFixtureWriter.swift" "$tree/Sources/release-fixtures/main.swift" ||
    cp "$root/Tests/Releases/$version/ReleaseFixtureWriter.swift" "$tree/Sources/release-fixtures/main.swift"
(cd "$tree" && swift build --product release-fixtures >&2 && swift build --product prefs-tool >&2 && swift build --product prefs-test-child >&2)
(cd "$tree" && swift build --show-bin-path)
