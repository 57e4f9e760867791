import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

/// Issue 19, items 5 and 6: exact snapshots (declarations carried, import --replace, diff), and imports checked
/// against declared types as `set` checks them.
@Suite("prefs-tool: snapshots, diff, declared types")
struct SnapshotTests {
    /// A store as an app leaves it: declared keys, stored values, a dialog record.
    func appStore(_ path: String) throws -> Prefs {
        let prefs = try Prefs(.file(URL(fileURLWithPath: path)))
        try prefs.declare(Prefs.Key("lastMessageId", initial: 0), Prefs.Key("dialog_neverAgain", initial: false))
        try prefs.setStoredValues([
            "lastMessageId": StoredValue(type: .int, json: .int(3)),
            "dialog_neverAgain": StoredValue(type: .bool, json: .bool(true)),
            "note": StoredValue(type: .string, json: .string("a\nb")),
        ])
        return prefs
    }

    @Test(
        "export carries declarations; import --replace makes another store hold exactly the snapshot; diff finds nothing",
        arguments: StoreFile.allCases, StoreFile.allCases)
    func exactSnapshot(source: StoreFile, target: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.file("source.\(source.rawValue)").path
        let prefs = try appStore(sourcePath)
        let snapshot = directory.file("bug-1234.json").path
        #expect(try await tool("--store", sourcePath, "export", snapshot).status == 0)
        let document = try JSON.parse(Data(contentsOf: URL(fileURLWithPath: snapshot)))
        #expect(document["declared"]?["lastMessageId"] == .object(["type": .string("int"), "initial": .int(0)]))

        // The target already holds a lastMessageId, a key the snapshot lacks, and a declaration of its own.
        let targetPath = directory.file("target.\(target.rawValue)").path
        let other = try Prefs(.file(URL(fileURLWithPath: targetPath)))
        try other.declare(Prefs.Key("extra", initial: ""))
        try other.setStoredValues(["lastMessageId": StoredValue(type: .int, json: .int(9)), "extra": StoredValue(type: .string, json: .string("x"))])
        let merged = try await tool("--store", targetPath, "diff", snapshot)
        #expect(merged.status == 1)
        #expect(
            merged.stdout == """
                -\tdialog_neverAgain\tbool\ttrue
                +\textra\tstring\tx
                -\tlastMessageId\tint\t3
                +\tlastMessageId\tint\t9
                -\tnote\tstring\ta\\nb
                -\tdialog_neverAgain\tbool\tfalse\t(declared)
                +\textra\tstring\t\t(declared)
                -\tlastMessageId\tint\t0\t(declared)

                """)
        let replaced = try await tool("--store", targetPath, "import", "--replace", snapshot)
        #expect(replaced.status == 0, "\(replaced)")
        #expect(replaced.stderr == "imported 3 values and 2 declarations, replacing the store's contents\n")
        let same = try await tool("--store", targetPath, "diff", snapshot)
        #expect(same.status == 0 && same.stdout.isEmpty, "\(same)")
        let copy = try Prefs(.file(URL(fileURLWithPath: targetPath)))
        #expect(try copy.snapshot() == prefs.snapshot())
        #expect(try copy.declaredKeys() == prefs.declaredKeys())
    }

    @Test("import without --replace merges: other keys stay, the snapshot's keys and declarations win", arguments: StoreFile.allCases)
    func mergingImport(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let snapshot = directory.file("snapshot.json").path
        _ = try appStore(directory.file("source.json").path)
        #expect(try await tool("--store", directory.file("source.json").path, "export", snapshot).status == 0)
        let store = file.path(in: directory)
        #expect(try await tool("--store", store, "set", "kept", "1").status == 0)
        #expect(try await tool("--store", store, "set", "lastMessageId", "9").status == 0)
        let imported = try await tool("--store", store, "import", snapshot)
        #expect(imported.stderr == "imported 3 values and 2 declarations\n")
        #expect(
            try await tool("--store", store, "list").stdout
                == "dialog_neverAgain\tbool\ttrue\nkept\tint\t1\nlastMessageId\tint\t3\nnote\tstring\ta\\nb\n")
        let diff = try await tool("--store", store, "diff", snapshot)
        #expect(diff.status == 1)
        #expect(diff.stdout == "+\tkept\tint\t1\n")
    }

    @Test("import checks values against declared types as set does: the document's declarations and the store's", arguments: StoreFile.allCases)
    func importChecksDeclaredTypes(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let prefs = try Prefs(.file(URL(fileURLWithPath: store)))
        try prefs.declare(Prefs.Key("lastMessageId", initial: 0))
        let setRefused = try await tool("--store", store, "set", "lastMessageId", "three")
        #expect(setRefused.status == 65)
        let document = #"{"formatVersion": 1, "values": {"ok": {"type": "int", "value": 1}, "lastMessageId": {"type": "string", "value": "three"}}}"#
        let refused = try await tool(["--store", store, "import", "-"], stdin: document)
        #expect(refused.status == 65, "as set refuses it")
        #expect(
            refused.stderr == """
                prefs-tool: error: <stdin>: $.values.lastMessageId: key "lastMessageId" is declared as int, and string "three" \
                cannot be read as one (a string is never read as int); nothing was written (--unchecked imports it as it is)

                """)
        #expect(try prefs.snapshot().isEmpty, "all or nothing")
        // Declared in the document itself, into a store that declares nothing.
        let fresh = directory.file("fresh.\(file.rawValue)").path
        let declaredInDocument =
            #"{"formatVersion": 1, "declared": {"n": {"type": "double", "initial": 0.5}}, "values": {"n": {"type": "json", "value": "x"}}}"#
        let refusedToo = try await tool(["--store", fresh, "import", "-"], stdin: declaredInDocument)
        #expect(refusedToo.status == 65, "\(refusedToo)")
        #expect(refusedToo.stderr.contains("key \"n\" is declared as double, and json \"x\" cannot be read as one (type double: "), "\(refusedToo.stderr)")
        // An int where a double is declared reads as the double: accepted, as the app reads it.
        #expect(
            try await tool(
                ["--store", store, "import", "-"],
                stdin: #"{"formatVersion": 1, "declared": {"r": {"type": "double", "initial": 0.5}}, "values": {"r": {"type": "int", "value": 2}}}"#
            ).status == 0)
        // --unchecked imports it as it is, to reproduce the bug; check then names it.
        #expect(try await tool(["--store", store, "import", "-", "--unchecked"], stdin: document).status == 0)
        #expect(try Prefs(.file(URL(fileURLWithPath: store))).storedValue(forKey: "lastMessageId") == StoredValue(type: .string, json: .string("three")))
        let check = try await tool("--store", store, "check")
        #expect(check.status == 65)
        #expect(
            check.stderr == """
                prefs-tool: error: key "lastMessageId" is declared as int, and its stored string "three" cannot be read as one \
                (a string is never read as int): the app reads its initial value 0 (prefs-tool reset lastMessageId)
                prefs-tool: error: \(store): 1 problem found

                """)
        #expect(try await tool("--store", store, "reset", "lastMessageId").status == 0)
        #expect(try await tool("--store", store, "check").status == 0)
    }

    @Test("diff reads stdin, refuses the store's own file, and names what is not a snapshot")
    func diffInputs() async throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("s.sqlite").path
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        let exported = try await tool("--store", store, "export").stdout
        let same = try await tool(["--store", store, "diff", "-"], stdin: exported)
        #expect(same.status == 0 && same.stdout.isEmpty)
        let own = try await tool("--store", store, "diff", store)
        #expect(own.status == 64)
        let listed = try await tool("--store", store, "list", "--json").stdout
        let wrong = try await tool(["--store", store, "diff", "-"], stdin: listed)
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("is the output of 'prefs-tool list --json'"), "\(wrong.stderr)")
    }
}
