#!/usr/bin/env bash
# Writes the files of a "future" release in this folder: each format one version past what this release reads, in the
# shape a later release might give it. ReleaseFixtureTests checks that this release refuses each, and changes nothing.
# Run once (needs the sqlite3 shell); commit what it writes.
#
#   store.json                      a JSON store file in format 3
#   journaled.json(.journal)        a format-2 file whose journal's header is in journal format 2
#   store.sqlite                    a Prefs SQLite store (application_id "Prfs") with user_version 2 and a table more
#   export.json                     a prefs-tool export in format 3
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
rm -f store.json journaled.json journaled.json.journal store.sqlite export.json
cat > store.json <<'JSON'
{
  "declared": {},
  "format": "prefs",
  "formatVersion": 3,
  "journalGeneration": "1f2e3d4c5b6a7980",
  "values": {
    "launchCount": {"type": "int", "value": 3},
    "window": {"type": "rect", "value": [0, 0, 800, 600]}
  }
}
JSON
cat > journaled.json <<'JSON'
{
  "declared": {},
  "format": "prefs",
  "formatVersion": 2,
  "journalGeneration": "1f2e3d4c5b6a7980",
  "values": {
    "launchCount": {"type": "int", "value": 3}
  }
}
JSON
# A header line: its CRC-32 (as zlib's) over the bytes before ,"crc":
python3 - <<'PY'
import zlib
body = '{"format":"prefs-journal","formatVersion":2,"generation":"1f2e3d4c5b6a7980","compression":"zstd"'
record = '{"seq":1,"values":{"launchCount":{"type":"int","value":4}}'
with open("journaled.json.journal", "w") as f:
    for line in (body, record):
        f.write(line + ',"crc":"%08x"}\n' % (zlib.crc32(line.encode()) & 0xffffffff))
PY
sqlite3 store.sqlite <<'SQL'
PRAGMA journal_mode = DELETE;
CREATE TABLE prefs (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, value, modified REAL) WITHOUT ROWID;
CREATE TABLE prefs_declared (key TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, initial TEXT) WITHOUT ROWID;
CREATE TABLE prefs_history (key TEXT NOT NULL, value, at REAL NOT NULL);
INSERT INTO prefs (key, type, value, modified) VALUES ('launchCount', 'int', 3, 1795996800.0);
PRAGMA application_id = 1349674611;
PRAGMA user_version = 2;
SQL
cat > export.json <<'JSON'
{
  "declared": {},
  "format": "prefs",
  "formatVersion": 3,
  "values": {
    "launchCount": {"type": "int", "value": 3}
  }
}
JSON
echo "wrote the future release's files in $here"
