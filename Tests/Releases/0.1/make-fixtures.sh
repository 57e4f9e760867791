#!/usr/bin/env bash
# Writes the fixtures of release 0.1 in this folder, with 0.1's own code (built by ../build-release.sh). Run once, from
# anywhere; commit what it writes (never the build). ReleaseFixtureTests reads them.
#
#   json/store.json, sqlite/store.sqlite   every value type of 0.1, enum keys, renamed keys, dialogs answered "never
#                                          remind", a snooze, an acknowledged remote message, a cached feed
#   expected.json                          each store's values and declarations as 0.1 reads them
#   json/format1-rewritten.json            a format-1 file this release wrote (a uint, a declaration with former
#                                          names: format1-written.json), then rewritten by 0.1 setting one key
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# PREFS_RELEASE_BUILDS=DIR keeps the release's build there, for another run.
bin="$("$root/Tests/Releases/build-release.sh" 0.1 "${PREFS_RELEASE_BUILDS:-$scratch}/0.1")"

rm -rf "$here/json" "$here/sqlite" "$here/expected.json"
"$bin/release-fixtures" write "$here"
rm -f "$here/json/store.json.lock" "$here/sqlite/store.sqlite-wal" "$here/sqlite/store.sqlite-shm"

# This release writes a format-1 file (the store exists in format 1: it stays so), then 0.1 rewrites it.
(cd "$root" && swift build --product prefs-tool >&2)
tool="$(cd "$root" && swift build --show-bin-path)/prefs-tool"
work="$scratch/format1.json"
printf '{"formatVersion": 1, "values": {}}\n' > "$work"
"$tool" --store "$work" import - <<'JSON'
{
  "declared": {
    "big": {"initial": 0, "type": "uint"},
    "launches": {"formerNames": ["launchCounter"], "initial": 0, "type": "int"}
  },
  "format": "prefs",
  "formatVersion": 2,
  "values": {
    "big": {"type": "uint", "value": 9223372036854775807},
    "launchCounter": {"type": "int", "value": 7}
  }
}
JSON
cp "$work" "$here/json/format1-written.json"
"$bin/release-fixtures" rewrite "$work" rewrittenBy01 1
cp "$work" "$here/json/format1-rewritten.json"
echo "wrote the fixtures of release 0.1 in $here"
