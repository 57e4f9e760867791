import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON
import PrefsSupport

@Suite("File stores: format, modes, corrupt files")
struct FileStoreTests {
    @Test("the JSON store is sorted, indented, versioned and hand-editable")
    func jsonFormat() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.jsonFile(url))
        try prefs.set(3, for: .launchCount)
        try prefs.set(Date(timeIntervalSince1970: 1_700_000_000.5), for: .lastLaunch)
        try prefs.close()  // folds the journal into the file
        let text = try String(contentsOf: url, encoding: .utf8)
            .replacing(/\n  "journalGeneration": "[0-9a-f]{16}",/, with: "")
        #expect(
            text == """
                {
                  "declared": {
                    "lastLaunch": {
                      "initial": "1970-01-01T00:00:00Z",
                      "type": "date"
                    },
                    "launchCount": {
                      "initial": 0,
                      "type": "int"
                    }
                  },
                  "format": "prefs",
                  "formatVersion": 2,
                  "values": {
                    "lastLaunch": {
                      "type": "date",
                      "value": "2023-11-14T22:13:20.5Z"
                    },
                    "launchCount": {
                      "type": "int",
                      "value": 3
                    }
                  }
                }

                """)
        // A hand edit: a bare value without its type tag is read with the type its JSON implies.
        let edited = text.replacingOccurrences(of: "\"values\": {", with: "\"values\": {\n    \"name\": \"edited by hand\",")
        try Data(edited.utf8).write(to: url)
        let reopened = try Prefs(.jsonFile(url))
        #expect(reopened[.name] == "edited by hand")
        #expect(reopened[.launchCount] == 3)
    }

    @Test("the SQLite schema reads plainly in the sqlite3 shell")
    func sqliteSchema() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        let prefs = try Prefs(.sqlite(url))
        try prefs.set(3, for: .launchCount)
        try prefs.set("x", for: .name)
        try prefs.close()
        let result = try await ChildProcess.runSystem(
            "/usr/bin/sqlite3", [url.path, "SELECT key, type, value FROM prefs ORDER BY key; PRAGMA application_id; PRAGMA user_version; PRAGMA journal_mode;"])
        #expect(result.stdout == "launchCount|int|3\nname|string|x\n1349674611\n1\nwal\n")
    }

    @Test("store files and sidecars are created with mode 0600", arguments: [Backend.json, .sqlite])
    func fileModes(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(backend.storage(directory))
        try prefs.set(1, for: .launchCount)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(files.count >= 2, "\(files)")  // the store and its lock file or WAL sidecars
        for file in files {
            let mode = try FileManager.default.attributesOfItem(atPath: directory.file(file).path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file) has mode \(String(mode ?? 0, radix: 8))")
        }
    }

    @Test("a write keeps the mode the owner gave an existing store file", arguments: [Backend.json, .sqlite])
    func existingModeKept(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let path = try #require(backend.storage(directory).path)
        try Prefs(backend.storage(directory)).set(1, for: .launchCount)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        try Prefs(backend.storage(directory)).set(2, for: .launchCount)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o640)
        #expect(try Prefs(backend.storage(directory))[.launchCount] == 2)
    }

    @Test(
        "a corrupt JSON store fails to open with the file, line and column, and its bytes are kept",
        arguments: [
            ("{\"formatVersion\": 1, \"values\": {", "invalid JSON at 1:33: expected a string key or '}', found end of input"),
            ("", "the file is empty"),
            ("garbage", "invalid JSON at 1:1"),
            ("[1, 2]", "expected a JSON object at the top level, found array"),
            ("{\"values\": {}}", "missing \"formatVersion\""),
        ])
    func corruptJSON(content: String, expected: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try Data(content.utf8).write(to: url)
        do {
            _ = try Prefs(.jsonFile(url))
            Issue.record("opening succeeded")
        } catch {
            guard case .corruptStore(let path, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == url.path)
            #expect(reason.contains(expected), "\(reason)")
        }
        #expect(try Data(contentsOf: url) == Data(content.utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["prefs.json"])
    }

    @Test("a newer format version is refused, not rewritten")
    func newerFormat() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let content = Data(#"{"formatVersion": 3, "values": {}}"#.utf8)
        try content.write(to: url)
        #expect(throws: PrefsError.unsupportedFormatVersion(path: url.path, found: 3, supported: 2)) {
            _ = try Prefs(.jsonFile(url))
        }
        #expect(try Data(contentsOf: url) == content)
    }

    @Test(
        "a .sqlite file that is not a database fails with a clear error and is untouched",
        arguments: [Data("this is not a database at all, just some text that goes on".utf8), Data([0x53, 0x51]), Data(repeating: 0xAB, count: 4096)])
    func corruptSQLite(content: Data) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        try content.write(to: url)
        #expect {
            _ = try Prefs(.sqlite(url))
        } throws: { error in
            guard case PrefsError.corruptStore(let path, let reason) = error else { return false }
            return path == url.path && reason.contains("not an SQLite database") || reason.contains("too short")
        }
        #expect(try Data(contentsOf: url) == content)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["prefs.sqlite"])
    }

    @Test("an SQLite database that is not a Prefs store is left untouched")
    func foreignDatabase() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("other.sqlite")
        _ = try await ChildProcess.runSystem("/usr/bin/sqlite3", [url.path, "CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('a');"])
        let before = try Data(contentsOf: url)
        #expect {
            _ = try Prefs(.sqlite(url))
        } throws: { error in
            "\(error)".contains("not a Prefs store")
        }
        #expect(try Data(contentsOf: url) == before)
    }

    @Test("an SQLite database with user_version set and no tables belongs to another program: refused, untouched")
    func foreignUserVersion() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("other.sqlite")
        _ = try await ChildProcess.runSystem("/usr/bin/sqlite3", [url.path, "PRAGMA user_version = 5;"])
        let before = try Data(contentsOf: url)
        #expect {
            _ = try Prefs(.sqlite(url))
        } throws: { error in
            guard case PrefsError.corruptStore(let path, let reason) = error else { return false }
            return path == url.path && reason.contains("not a Prefs store (application_id 0, user_version 5, 0 schema objects)")
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["other.sqlite"])
    }

    @Test(
        "a Prefs SQLite store whose schema was damaged by hand is a corrupt store naming what is missing; untouched",
        arguments: [
            ("DROP TABLE prefs;", "no such table: prefs"),
            ("DROP TABLE prefs; CREATE TABLE prefs (key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID;", "no such column: type"),
            ("DROP TABLE prefs_declared;", "no such table: prefs_declared"),
            ("ALTER TABLE prefs_declared RENAME COLUMN initial TO first;", "no such column: initial"),
            ("DROP TABLE prefs; CREATE TABLE prefs (key, type, value);", "prefs.key is not a primary key"),
            // prefs still has the statement that created it: one table as created does not vouch for the other
            ("DROP TABLE prefs_declared; CREATE TABLE prefs_declared (key, type, initial);", "prefs_declared.key is not a primary key"),
        ])
    func damagedSchema(damage: String, missing: String) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        let prefs = try Prefs(.sqlite(url))
        try prefs.set(3, for: .launchCount)
        try prefs.close()
        let damaged = try await ChildProcess.runSystem("/usr/bin/sqlite3", [url.path, damage])
        #expect(damaged.status == 0, "\(damaged.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        let before = try files.map { try Data(contentsOf: directory.file($0)) }
        #expect {
            _ = try Prefs(.sqlite(url))
        } throws: { error in
            guard case PrefsError.corruptStore(let path, let reason) = error else { return false }
            return path == url.path && reason.hasPrefix("a Prefs store whose schema is damaged (\(missing))")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files)
        #expect(try files.map { try Data(contentsOf: directory.file($0)) } == before)
    }

    @Test("a Prefs SQLite store whose tables were created by other statements of the same schema opens, reads and writes")
    func sameSchemaSpelledOtherwise() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        let script = """
            create table prefs ("key" text not null primary key, type text not null, value) without rowid;
            CREATE TABLE prefs_declared (key TEXT NOT NULL, type TEXT NOT NULL, initial TEXT, PRIMARY KEY (key)) WITHOUT ROWID;
            INSERT INTO prefs VALUES ('launchCount', 'int', 7);
            PRAGMA application_id = 1349674611; PRAGMA user_version = 1;
            """
        let made = try await ChildProcess.runSystem("/usr/bin/sqlite3", [url.path, script])
        #expect(made.status == 0, "\(made.stderr)")
        let prefs = try Prefs(.sqlite(url))
        #expect(prefs[.launchCount] == 7)
        try prefs.set(8, for: .launchCount)
        try prefs.close()
        #expect(try Prefs(.sqlite(url))[.launchCount] == 8)
    }

    @Test("a current store switched to a rollback journal by hand is in WAL mode again once opened, its values kept")
    func rollbackModeSwitchedBack() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.sqlite")
        let prefs = try Prefs(.sqlite(url))
        try prefs.set(5, for: .launchCount)
        try prefs.close()
        let switched = try await ChildProcess.runSystem("/usr/bin/sqlite3", [url.path, "PRAGMA journal_mode = DELETE;"])
        #expect(switched.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "delete", "\(switched.stderr)")
        let header = { try Data(contentsOf: url).prefix(20) }
        #expect(try header()[18] == 1, "the file format bytes say rollback journal")
        let reopened = try Prefs(.sqlite(url))
        #expect(reopened[.launchCount] == 5)
        #expect(try header()[18] == 2, "the file format bytes say WAL")
        try reopened.set(6, for: .launchCount)
        try reopened.close()
        #expect(try Prefs(.sqlite(url))[.launchCount] == 6)
    }

    @Test("quickCheckProblems: empty for a sound store, whatever its values; a damaged file is reported", arguments: Backend.allCases)
    func quickCheck(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(backend.storage(directory))
        try prefs.set(1, for: .launchCount)
        try prefs.setStoredValue(StoredValue(type: .date, json: .string("yesterday")), forKey: "when")
        #expect(try prefs.quickCheckProblems() == [], "a value of the wrong shape is integrityProblems' business")
        #expect(try prefs.integrityProblems().count == (backend.checksStoredValues ? 1 : 0))
        guard backend.isFile else { return }
        let url = directory.file(backend == .json ? "prefs.json" : "prefs.sqlite")
        if backend == .json {
            try Data("{ damaged".utf8).write(to: url)
            #expect(throws: PrefsError.self) { try prefs.quickCheckProblems() }
        } else {
            var values: [String: StoredValue?] = [:]
            for index in 0..<300 { values["key\(index)"] = StoredValue(type: .string, json: .string(String(repeating: "v", count: 200))) }
            try prefs.setStoredValues(values)
            try prefs.close()
            let handle = try FileHandle(forWritingTo: url)
            try handle.seek(toOffset: 11 * 4096)
            var random = SeededGenerator(seed: 12)
            try handle.write(contentsOf: Data((0..<4000).map { _ in UInt8.random(in: 0...255, using: &random) }))
            try handle.close()
            let reopened = try Prefs(.sqlite(url))
            do {
                #expect(try !reopened.quickCheckProblems().isEmpty)
            } catch PrefsError.corruptStore(let path, _) {
                #expect(path == url.path)
            }
        }
    }

    @Test("recovery moves an unreadable file aside byte for byte and starts empty", arguments: [Backend.json, .sqlite])
    func recovery(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let name = backend == .json ? "prefs.json" : "prefs.sqlite"
        let url = directory.file(name)
        let garbage = Data("{ not json, not sqlite".utf8)
        try garbage.write(to: url)
        let log = DiagnosticLog()
        let storage: Prefs.Storage =
            backend == .json
            ? .jsonFile(url, recovery: .moveAsideAndStartEmpty) : .sqlite(url, recovery: .moveAsideAndStartEmpty)
        let prefs = try Prefs(storage) { log.append($0) }
        #expect(prefs[.launchCount] == 0)
        try prefs.set(1, for: .launchCount)
        let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).first { $0.hasPrefix(name + ".corrupt-") })
        #expect(try Data(contentsOf: directory.file(aside)) == garbage)
        #expect(log.all.count == 1)
        #expect(log.all.first?.description.contains("unreadable file moved to") == true)
    }

    @Test(
        "a store whose files cannot be written gives a typed error (JSON: on write, SQLite: on open); memory and disk stay consistent",
        arguments: [Backend.json, .sqlite])
    func unwritable(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let prefs = try Prefs(backend.storage(directory))
        try prefs.set(1, for: .launchCount)
        // Make the next write fail whatever our privileges: the lock file (JSON) or the WAL (SQLite) becomes a directory.
        let sidecar = backend == .json ? "prefs.json.lock" : "prefs.sqlite-wal"
        try prefs.close()
        try? FileManager.default.removeItem(at: directory.file(sidecar))
        try FileManager.default.createDirectory(at: directory.file(sidecar), withIntermediateDirectories: false)
        if backend == .json {
            // The JSON store opens (reading needs no lock); its next write fails on the lock file.
            let blocked = try Prefs(backend.storage(directory))
            #expect(throws: PrefsError.io(path: directory.file(sidecar).path, operation: "open lock file", errno: EISDIR)) {
                try blocked.set(2, for: .launchCount)
            }
            #expect(blocked[.launchCount] == 1, "the failed write is not visible in memory")
            blocked[.launchCount] = 3
            #expect(blocked[.launchCount] == 1)
            #expect(blocked.diagnostics.map(\.description).contains { $0.contains("write failed: \(directory.file(sidecar).path): open lock file failed") })
        } else {
            // A WAL that is not a regular file (a directory here, a planted link elsewhere) is refused by name before
            // SQLite opens anything: the store does not open.
            #expect(throws: PrefsError.io(path: directory.file(sidecar).path, operation: "open (not a regular file)", errno: EINVAL)) {
                _ = try Prefs(backend.storage(directory))
            }
        }
        try FileManager.default.removeItem(at: directory.file(sidecar))
        #expect(try Prefs(backend.storage(directory))[.launchCount] == 1, "nothing was reported done that was not")
    }

    @Test("a store path that is a symbolic link writes through to the link's target", arguments: [Backend.json, .sqlite])
    func symbolicLink(backend: Backend) throws {
        let directory = try TemporaryDirectory()
        let ext = backend == .json ? "json" : "sqlite"
        let target = directory.file("real.\(ext)")
        let link = directory.file("link.\(ext)")
        try Prefs(backend == .json ? .jsonFile(target) : .sqlite(target)).set(1, for: .launchCount)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let viaLink = try Prefs(backend == .json ? .jsonFile(link) : .sqlite(link))
        try viaLink.set(2, for: .launchCount)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
        #expect(try Prefs(backend == .json ? .jsonFile(target) : .sqlite(target))[.launchCount] == 2)
    }

    @Test("coalesced JSON writes return at once and reach the disk on flush and on close, not before")
    func coalesced() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        // An interval no test run reaches: only flush() and close() can write.
        let prefs = try Prefs(.jsonFile(url, writeMode: .coalesced(.seconds(3600))))
        try prefs.set(1, for: .launchCount)
        #expect(try Prefs(.jsonFile(url)).storedValue(forKey: "launchCount") == nil, "not on disk before a flush")
        #expect(prefs[.launchCount] == 1)
        try prefs.flush()
        #expect(try Prefs(.jsonFile(url))[.launchCount] == 1)
        try prefs.set(3, for: .launchCount)
        #expect(try Prefs(.jsonFile(url))[.launchCount] == 1)
        try prefs.close()
        #expect(try Prefs(.jsonFile(url))[.launchCount] == 3)
    }

    @Test("a coalesced write reaches the disk when the store's clock passes its interval, not before")
    func coalescedOnTheStoresClock() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let clock = StoreClock.Manual()
        let prefs = try Prefs(Prefs.Storage.jsonFile(url, writeMode: .coalesced(.seconds(5))).clock(StoreClock(clock)))
        try prefs.set(2, for: .launchCount)
        clock.advance(by: .seconds(4))
        #expect(try Prefs(.jsonFile(url)).storedValue(forKey: "launchCount") == nil, "4 s: not on disk yet")
        clock.advance(by: .seconds(1))  // the flush runs on this thread
        #expect(try Prefs(.jsonFile(url))[.launchCount] == 2, "5 s: flushed by the timer, with no flush() call")
        withExtendedLifetime(prefs) {}
    }

    @Test("coalesced JSON writes reach the disk on schedule, by themselves")
    func coalescedTimer() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let prefs = try Prefs(.jsonFile(url, writeMode: .coalesced(.milliseconds(20))))
        try prefs.set(2, for: .launchCount)
        // Another store on the file signals the change when it sees it on disk: nothing here flushes.
        let reader = try Prefs(.jsonFile(url), pollInterval: .milliseconds(10))
        let seen = try await withDeadline(.seconds(60), "the timer's flush") {
            for await value in reader.values(for: .launchCount) where value == 2 { return true }
            return false
        }
        #expect(seen)
    }
}

@Suite("File stores: leftovers")
struct LeftoverTests {
    @Test("temporary files left by a writer killed mid-write are removed by the next writer")
    func leftovers() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        try Prefs(.jsonFile(url)).set(1, for: .launchCount)
        let leftover = directory.file("prefs.json.tmp-999999-12345")
        try Data("{\"half\": ".utf8).write(to: leftover)
        let prefs = try Prefs(.jsonFile(url))
        #expect(prefs[.launchCount] == 1, "a leftover is never read")
        try prefs.set(2, for: .launchCount)
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["prefs.json", "prefs.json.journal", "prefs.json.lock"])
    }
}
