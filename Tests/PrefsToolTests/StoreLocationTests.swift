import Foundation
import TestFixtures
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing

/// Issue 19, items 3, 7 and 8: finding the app's store, hints in `defaults`' words, consistent exits and options.
@Suite("prefs-tool: finding stores, hints, exits")
struct StoreLocationTests {
    /// A default location (`$XDG_CONFIG_HOME/prefs`) holding the app's store and another one.
    func defaultLocation() async throws -> (TemporaryDirectory, [String: String]) {
        let directory = try TemporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": directory.url.path]
        for app in ["com.createchsol.AppAlertExample", "com.example.Other"] {
            #expect(try await tool(["--app", app, "set", "lastMessageId", "1"], environment: environment).status == 0)
        }
        try Data("{}".utf8).write(to: directory.file("prefs/notes.txt"))
        return (directory, environment)
    }

    @Test("--app ID addresses the store by bundle identifier in the default location, as defaults read DOMAIN")
    func appOption() async throws {
        let (directory, environment) = try await defaultLocation()
        let path = "\(directory.url.path)/prefs/com.createchsol.AppAlertExample.sqlite"
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try await tool(["--app", "com.createchsol.AppAlertExample", "get", "lastMessageId"], environment: environment).stdout == "1\n")
        #expect(
            try await tool(["get", "lastMessageId", "--app=com.createchsol.AppAlertExample"], environment: environment).stdout == "1\n",
            "a global option, before or after the command")
        var withVariable = environment
        withVariable["PREFS_STORE"] = directory.file("elsewhere.json").path
        #expect(
            try await tool(["--app", "com.createchsol.AppAlertExample", "get", "lastMessageId"], environment: withVariable).stdout == "1\n",
            "--app wins over $PREFS_STORE, as --store does")
        let both = try await tool(["--app", "a.b", "--store", path, "list"], environment: environment)
        #expect(both.status == 64)
        #expect(both.stderr.hasPrefix("prefs-tool: error: give --store or --app, not both\n"))
        let bad = try await tool(["--app", "../x", "list"], environment: environment)
        #expect(bad.status == 64)
        let typo = try await tool(["--app", "com.createchsol.AppAlertExampel", "list"], environment: environment)
        #expect(typo.status == 74)
        #expect(
            typo.stderr
                == "prefs-tool: error: no store at \(directory.url.path)/prefs/com.createchsol.AppAlertExampel.sqlite; did you mean --app com.createchsol.AppAlertExample?\n"
        )
    }

    @Test("stores lists the default location's stores by identifier, as defaults domains; --paths gives their paths")
    func storesCommand() async throws {
        let (directory, environment) = try await defaultLocation()
        let stores = try await tool(["stores"], environment: environment)
        #expect(stores.status == 0)
        #expect(stores.stdout == "com.createchsol.AppAlertExample\ncom.example.Other\n")
        #expect(
            try await tool(["stores", "--paths"], environment: environment).stdout
                == "\(directory.url.path)/prefs/com.createchsol.AppAlertExample.sqlite\n\(directory.url.path)/prefs/com.example.Other.sqlite\n")
        let empty = try await tool(["stores"], environment: ["XDG_CONFIG_HOME": directory.file("none").path])
        #expect(empty.status == 0 && empty.stdout.isEmpty)
        #expect(empty.stderr == "no stores in the default location (\(directory.url.path)/none/prefs/ID.sqlite)\n")
        let domains = try await tool(["domains"], environment: environment)
        #expect(domains.status == 64)
        #expect(domains.stderr.hasPrefix("prefs-tool: error: unknown command 'domains'; did you mean 'stores'?"), "\(domains.stderr)")
    }

    @Test("the no-store error names the stores nearby: in the default location, and beside a path")
    func nearbyStores() async throws {
        let (directory, environment) = try await defaultLocation()
        let defaulted = try await tool(["list"], environment: environment)
        #expect(defaulted.status == 74)
        #expect(
            defaulted.stderr == """
                prefs-tool: error: no store at \(directory.url.path)/prefs/default.sqlite (give --store PATH, --app ID or set PREFS_STORE); \
                the default location holds 2 stores: com.createchsol.AppAlertExample, com.example.Other (see 'prefs-tool stores')

                """)
        try FileManager.default.removeItem(atPath: "\(directory.url.path)/prefs/com.example.Other.sqlite")
        #expect(
            try await tool(["list"], environment: environment).stderr.hasSuffix(
                "; the default location holds one store: --app com.createchsol.AppAlertExample\n"))
        let beside = try await tool(["--store", "\(directory.url.path)/prefs/com.createchsol.AppAlertExample.sqlit", "list"], environment: environment)
        #expect(beside.stderr.hasSuffix("; did you mean \(directory.url.path)/prefs/com.createchsol.AppAlertExample.sqlite?\n"), "\(beside.stderr)")
        let other = try await tool(["--store", "\(directory.url.path)/prefs/zzz.json", "list"], environment: environment)
        #expect(other.stderr.hasSuffix("; stores there: com.createchsol.AppAlertExample.sqlite\n"), "\(other.stderr)")
    }

    @Test("defaults' and neighbouring tools' words get the prefs-tool command")
    func defaultsWords() async throws {
        for (word, meant) in [
            ("read", "'get'? ('defaults read DOMAIN KEY' is 'prefs-tool --app DOMAIN get KEY'; without KEY, 'list')"),
            ("write", "'set'?"), ("delete", "'reset'?"), ("rm", "'reset'?"), ("-v", "'--version'?"), ("version", "'--version'?"),
            ("explain", "'feed explain'?"),
        ] {
            let result = try await tool(word, "x")
            #expect(result.status == 64)
            let what = word.hasPrefix("-") ? "option" : "command"
            #expect(result.stderr.hasPrefix("prefs-tool: error: unknown \(what) '\(word)'; did you mean \(meant)"), "\(word): \(result.stderr)")
        }
    }

    @Test("import names the right command for a property list and for list --json output", arguments: StoreFile.allCases)
    func importHints(file: StoreFile) async throws {
        let directory = try TemporaryDirectory()
        let store = file.path(in: directory)
        let plist = directory.file("app.plist")
        try PropertyListSerialization.data(fromPropertyList: ["lastMessageId": 3], format: .binary, options: 0).write(to: plist)
        let plistResult = try await tool("--store", store, "import", plist.path)
        #expect(plistResult.status == 64)
        #expect(
            plistResult.stderr.hasPrefix("prefs-tool: error: \(plist.path) is a property list; did you mean 'prefs-tool import --plist \(plist.path)'?\n"),
            "\(plistResult.stderr)")
        try PropertyListSerialization.data(fromPropertyList: ["a": 1], format: .xml, options: 0).write(to: plist)
        #expect(try await tool("--store", store, "import", plist.path).status == 64, "an XML property list too")
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        let listed = try await tool("--store", store, "list", "--json").stdout
        let listResult = try await tool(["--store", store, "import", "-"], stdin: listed)
        #expect(listResult.status == 65)
        #expect(
            listResult.stderr
                == "prefs-tool: error: <stdin> is the output of 'prefs-tool list --json', which 'import' does not read; write a snapshot to import with 'prefs-tool export FILE'\n"
        )
    }

    @Test("options an action does not take are refused, not ignored")
    func actionOptions() async throws {
        let directory = try TemporaryDirectory()
        let feed = directory.file("messages.json")
        try Data(FeedCommandTests.seedFeed.utf8).write(to: feed)
        let lint = try await tool("feed", "lint", feed.path, "--json")
        #expect(lint.status == 64)
        #expect(lint.stderr == "prefs-tool: error: unknown option '--json' for 'feed lint'\nusage: prefs-tool feed lint FILE|URL [--strict] [--allow-http]\n")
        #expect(try await tool("feed", "fetch", "https://example.invalid/", "--bundle-id", "x").status == 64)
        let store = directory.file("d.sqlite").path
        #expect(try await tool("--store", store, "set", "a", "1").status == 0)
        #expect(try await tool("--store", store, "dialogs", "reset", "x", "--json").status == 64)
        #expect(try await tool("--store", store, "dialogs", "list", "--all").status == 64)
        #expect(try await tool("--store", store, "dialogs", "--json").status == 0, "list is the default action")
        let action = try await tool("--store", store, "dialogs", "rest")
        #expect(action.status == 64)
        #expect(action.stderr.hasPrefix("prefs-tool: error: unknown dialogs action 'rest'; did you mean 'reset'?\n"))
    }
}
