import Foundation
import Prefs

/// `export`, `import`, `migrate`: moving every value with its type.
enum TransferCommands {
    static let all = [export, importCommand, migrate]

    static let export = Command(spec: CommandSpec(
        name: "export", summary: "Write every stored value with its type as one JSON document.",
        usage: "prefs-tool [--store PATH] export [FILE|-]",
        help: """
            The document has the JSON store's format (an export is itself a JSON store). Without FILE, or with -,
            it goes to stdout. A FILE is written atomically with mode 0600; when FILE is a symbolic link, the link
            stays and its target is replaced. FILE cannot be the store itself or one of its -wal, -shm, -journal
            or .lock files (exit 64).
            """,
        positionals: 0...1)
    ) { arguments, context in
        let destination = arguments.positionals.first ?? "-"
        if destination != "-", let suffix = context.store.ownFile(destination) {
            throw ToolError.usage("refusing to export to \(destination): it is \(context.store.describeOwnFile(suffix)); nothing was written", context.usage)
        }
        let data = try StoreArchive.export(context.store.open())
        if destination == "-" {
            FileHandle.standardOutput.write(data)
        } else {
            try write(data, to: destination)
        }
        return 0
    }

    static let importCommand = Command(spec: CommandSpec(
        name: "import", summary: "Read values from an export document (all or nothing), or a UserDefaults property list.",
        usage: "prefs-tool [--store PATH] import FILE|- | import --plist FILE",
        help: """
            Every entry is checked first (key name, type, value); a bad document exits 65 and changes nothing.
            Imported values replace stored values of the same keys; other keys are kept. Creates a missing store.
            --plist reads a UserDefaults property list (XML or binary, e.g. ~/.config/NAME.plist, or
            Library/Preferences/BUNDLE-ID.plist from an app container) in one transaction; values Prefs cannot hold are
            listed by key on stderr. A file that is not a property list exits 65 and changes nothing. FILE cannot be
            the store itself or one of its files (exit 64).
            """,
        flags: ["plist"], positionals: 1...1)
    ) { arguments, context in
        let source = arguments.positionals[0]
        // Reading the store's own file beside its open connection would also drop SQLite's locks on it.
        if source != "-", let suffix = context.store.ownFile(source) {
            throw ToolError.usage("refusing to import from \(source): it is \(context.store.describeOwnFile(suffix)); nothing was written", context.usage)
        }
        if arguments.flag("plist") {
            guard source != "-" else { throw ToolError.usage("--plist reads a file, not stdin", context.usage) }
            let report: PrefsDefaults.ImportReport
            do {
                report = try PrefsDefaults(context.store.open(create: true, checked: true)).importPropertyList(at: URL(fileURLWithPath: source))
            } catch let error as PropertyListImport.Error {
                if case .unreadable = error { throw ToolError.io(error.description) }
                throw ToolError.data(error.description)
            }
            for line in report.description.split(separator: "\n") { Terminal.note(String(line)) }
            return 0
        }
        let data = try read(source)
        let values: [String: StoredValue]
        do {
            values = try StoreArchive.decode(data, source: source == "-" ? "<stdin>" : source)
        } catch {
            throw ToolError(error)
        }
        try context.store.open(create: true, checked: true).setStoredValues(values.mapValues { .some($0) })
        Terminal.note("imported \(values.count) value\(values.count == 1 ? "" : "s")")
        return 0
    }

    static let migrate = Command(spec: CommandSpec(
        name: "migrate", summary: "Copy every value and declaration into another store, of any backend.",
        usage: "prefs-tool [--store PATH] migrate --to PATH [--overwrite]",
        help: """
            The source is untouched. The target is created when missing, and removed again when the copy fails. A key the target already holds with another
            value is a conflict (exit 65, nothing written) unless --overwrite. The target cannot be the source store
            itself or one of its files (exit 64).
            """,
        options: ["to"], flags: ["overwrite"])
    ) { arguments, context in
        guard let targetPath = arguments.option("to") else { throw ToolError.usage("missing --to PATH", context.usage) }
        if let suffix = context.store.ownFile(targetPath) {
            throw ToolError.usage("refusing to migrate to \(targetPath): it is \(context.store.describeOwnFile(suffix, as: "the source store")); nothing was written", context.usage)
        }
        // The source is checked too: a damaged page could hide values from the copy without an error.
        let source = try context.store.open(checked: true)
        let values = try source.snapshot()
        do { try StoreArchive.validate(values, source: context.store.path) } catch { throw ToolError(error) }
        let declarations = try source.declaredKeys()
        let locator = try StoreLocator(option: targetPath, environment: context.environment)
        // A new target that the copy then fails to fill (a value the target refuses, an I/O error) is removed again.
        let created = NewStoreFiles(path: locator.path)
        var target: Prefs?
        do {
            let opened = try locator.open(create: true, checked: true)
            target = opened
            let existing = try opened.snapshot()
            let conflicts = values.keys.filter { existing[$0] != nil && existing[$0] != values[$0] }.sorted()
            if !conflicts.isEmpty && !arguments.flag("overwrite") {
                throw ToolError.data("the target already holds other values for \(conflicts.map(ValueText.quoted).joined(separator: ", ")); nothing was written (use --overwrite)")
            }
            try opened.setStoredValues(values.mapValues { .some($0) })
            try opened.recordDeclarations(declarations)
        } catch {
            try? target?.close()  // the failure being reported is the one that matters
            created.remove()
            throw error
        }
        Terminal.note("copied \(values.count) value\(values.count == 1 ? "" : "s") and \(declarations.count) declaration\(declarations.count == 1 ? "" : "s") to \(targetPath)")
        return 0
    }

    /// The bytes of `source` (`-`: stdin). Only a regular file is read: a FIFO or a device is refused (exit 65) rather
    /// than waited on or read for ever, and a directory or a missing file is an I/O error (exit 74).
    static func read(_ source: String) throws -> Data {
        if source == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do {
            guard let (data, _) = try FileSystem.contents(of: source) else { throw ToolError.io("cannot read \(source): no such file") }
            return data
        } catch let error as PrefsError {
            throw ToolError(error)
        }
    }

    /// Replaces the file at `path` atomically with mode 0600 (``FileSystem/replace(_:with:sync:keepingMode:)``: the
    /// temporary file beside it is 0600 from its creation, so no other user can read the store while it is written).
    /// A `path` that is a symbolic link is written through, as a shell's `>` and `cp` do: the link stays and its
    /// target is replaced; but not a link another user planted in a shared sticky directory (exit 74).
    static func write(_ data: Data, to path: String) throws {
        do {
            guard let target = try FileSystem.resolvingTrustedLinks(path) else {
                throw ToolError.io("cannot write \(path): \(String(cString: strerror(ELOOP)))")
            }
            try FileSystem.replace(target, with: data, sync: false, keepingMode: false)
        } catch let error as PrefsError {
            throw ToolError.io("cannot write \(path): \(error)")
        }
    }
}
