-- A PostgreSQL store in format 1, as the release before format 2 (commit 92f9433) created and wrote it: its DDL,
-- verbatim from that release's PostgreSQLSchema.createStatements, and the rows its prefs-tool wrote for
-- `import` (namespace user-1: values of several types, two declarations, a key renamed twice with its value still under
-- the first former name) and `set` (namespace user-2). PostgreSQLMigrationTests loads it into a fresh database and
-- opens it with this release. Never edit it: a later format gets a fixture of its own.
BEGIN;
CREATE TABLE IF NOT EXISTS prefs_meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS prefs_namespaces (namespace text PRIMARY KEY, generation bigint NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS prefs (namespace text NOT NULL, key text NOT NULL, type text NOT NULL, value text NOT NULL, PRIMARY KEY (namespace, key));
CREATE TABLE IF NOT EXISTS prefs_declared (namespace text NOT NULL, key text NOT NULL, type text NOT NULL, initial text, PRIMARY KEY (namespace, key));
CREATE TABLE IF NOT EXISTS prefs_renamed (namespace text NOT NULL, key text NOT NULL, position integer NOT NULL, former text NOT NULL, PRIMARY KEY (namespace, key, position));
INSERT INTO prefs_meta (name, value) VALUES ('format_version', '1') ON CONFLICT (name) DO NOTHING;

INSERT INTO prefs_namespaces VALUES ('user-1', 1, '2026-12-02 06:38:13.109435+00');
INSERT INTO prefs_namespaces VALUES ('user-2', 3, '2026-12-02 06:38:13.208958+00');

INSERT INTO prefs VALUES ('user-1', 'lastSync', 'date', '"2026-11-30T10:00:00.123456789Z"');
INSERT INTO prefs VALUES ('user-1', 'launchCount', 'int', '3');
INSERT INTO prefs VALUES ('user-1', 'tags', '[string]', '["a","b"]');
INSERT INTO prefs VALUES ('user-1', 'colorScheme', 'string', '"dark"');
INSERT INTO prefs VALUES ('user-1', 'name', 'string', '"ada \"lovelace\" é"');
INSERT INTO prefs VALUES ('user-2', 'launchCount', 'int', '9');

INSERT INTO prefs_declared VALUES ('user-1', 'theme', 'string', '"light"');
INSERT INTO prefs_declared VALUES ('user-1', 'launchCount', 'int', '0');

INSERT INTO prefs_renamed VALUES ('user-1', 'theme', 0, 'colorScheme');
INSERT INTO prefs_renamed VALUES ('user-1', 'theme', 1, 'appearance');
COMMIT;
