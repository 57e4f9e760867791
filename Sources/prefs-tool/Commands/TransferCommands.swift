import Foundation
import Prefs
import PrefsUserDefaults
import PrefsJSON

/// `export`, `import`, `migrate`: moving every value with its type.
enum TransferCommands {
    static let all = [export, importCommand, diff, migrate]

    static let export = Command(
        spec: CommandSpec(
            name: "export", summary: "Write every value and declaration as one JSON document.",
            usage: "prefs-tool [--store PATH] export [FILE|-]",
            help: """
                The document has the JSON store's format (an export is itself a JSON store). Without FILE, or with -,
                it goes to stdout. A FILE is written atomically with mode 0600; when FILE is a symbolic link, the link
                stays and its target is replaced. A terminal, pipe or device of yours (/dev/stdout, /dev/null) is
                written in place. FILE's folders and links must be yours or root's, and no other user may write a folder
                unless it is sticky, like /tmp (exit 74). FILE cannot be the store itself or one of its -wal, -shm,
                -journal, .journal or .lock files (exit 64).
                """,
            positionals: 0...1)
    ) { arguments, context in
        let destination = arguments.positionals.first ?? "-"
        if destination != "-", let suffix = context.store.ownFile(destination) {
            throw ToolError.usage("refusing to export to \(destination): it is \(context.store.describeOwnFile(suffix)); nothing was written", context.usage)
        }
        let data = try StoreArchive.export(context.store.open())
        if destination == "-", Terminal.standardOutputIsTerminal {
            FileHandle.standardOutput.write(Data(Terminal.escapingJSON(String(decoding: data, as: UTF8.self)).utf8))
        } else if destination == "-" {
            FileHandle.standardOutput.write(data)
        } else {
            try write(data, to: destination)
        }
        return 0
    }

    static let importCommand = Command(
        spec: CommandSpec(
            name: "import", summary: "Read an export (all or nothing), or a UserDefaults property list.",
            usage: "prefs-tool [--store PATH] import FILE|- [--replace] [--unchecked] | import --plist FILE",
            help: """
                Every entry is checked first (key name, type, value, and the type its key is declared with, in the
                document or in the store, as 'set' checks it); a bad document exits 65 and changes nothing.
                Imported values and declarations replace those of the same keys; other keys are kept. With --replace the
                store holds exactly the document afterwards: every other value and declaration is removed, in the same
                step ('prefs-tool diff FILE' then finds no difference). --unchecked imports values that do not fit their
                declared type as they are, to reproduce a store whose app reads them as initial values. Creates a
                missing store.
                --plist reads a UserDefaults property list (XML or binary, e.g. ~/.config/NAME.plist, or
                Library/Preferences/BUNDLE-ID.plist from an app container) in one transaction; values Prefs cannot hold
                are listed by key on stderr. A file that is not a property list exits 65 and changes nothing. FILE cannot
                be the store itself or one of its files (exit 64).
                """,
            flags: ["plist", "replace", "unchecked"], positionals: 1...1)
    ) { arguments, context in
        let source = arguments.positionals[0]
        // Reading the store's own file beside its open connection would also drop SQLite's locks on it.
        if source != "-", let suffix = context.store.ownFile(source) {
            throw ToolError.usage("refusing to import from \(source): it is \(context.store.describeOwnFile(suffix)); nothing was written", context.usage)
        }
        if arguments.flag("plist") {
            guard source != "-" else { throw ToolError.usage("--plist reads a file, not stdin", context.usage) }
            if arguments.flag("replace") || arguments.flag("unchecked") {
                throw ToolError.usage("--plist imports into the store as it is; --replace and --unchecked are for export documents", context.usage)
            }
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
        let name = source == "-" ? "<stdin>" : source
        let archive: StoreArchive
        do {
            archive = try StoreArchive.contents(of: data, source: name)
        } catch {
            if let hint = ImportHint.forDocument(data, source: source, usage: context.usage) { throw hint }
            throw ToolError(error)
        }
        do {
            try context.store.open(create: true, checked: true)
                .importArchive(archive, replacing: arguments.flag("replace"), checkingDeclarations: !arguments.flag("unchecked"))
        } catch PrefsError.typeMismatch(let key, let mismatch) {
            let value = mismatch.stored
            throw ToolError.data(
                """
                \(name): \(JSONPath.root / "values" / key): key \(ValueText.quoted(key)) is declared as \(mismatch.expected), \
                and \(value.type) \(value.preview()) cannot be read as one (\(mismatch.reason)); nothing was written \
                (--unchecked imports it as it is)
                """)
        }
        let counts =
            "\(archive.values.count) value\(archive.values.count == 1 ? "" : "s") and \(archive.declarations.count) declaration\(archive.declarations.count == 1 ? "" : "s")"
        Terminal.note("imported \(counts)\(arguments.flag("replace") ? ", replacing the store's contents" : "")")
        return 0
    }

    static let diff = Command(
        spec: CommandSpec(
            name: "diff", summary: "Compare the store with a snapshot written by 'export'.",
            usage: "prefs-tool [--store PATH] diff FILE|-",
            help: """
                Prints what differs, one line per value in the format of 'list': lines starting with - are the
                snapshot's, lines starting with + the store's; a key whose value changed has one of each. Declarations
                that differ are listed the same way, marked (declared). Exits 0 when the store holds exactly the
                snapshot, 1 when something differs (as diff(1) does), 65 for a document that is not a snapshot.
                """,
            positionals: 1...1)
    ) { arguments, context in
        let source = arguments.positionals[0]
        if source != "-", let suffix = context.store.ownFile(source) {
            throw ToolError.usage("refusing to compare with \(source): it is \(context.store.describeOwnFile(suffix))", context.usage)
        }
        let data = try read(source)
        let snapshot: StoreArchive
        do {
            snapshot = try StoreArchive.contents(of: data, source: source == "-" ? "<stdin>" : source)
        } catch {
            if let hint = ImportHint.forDocument(data, source: source, usage: context.usage) { throw hint }
            throw ToolError(error)
        }
        let prefs = try context.store.open()
        let store = StoreArchive(values: try prefs.snapshot(), declarations: try prefs.declaredKeys())
        var table = KeyTable()
        for name in Set(snapshot.values.keys).union(store.values.keys).sorted() where snapshot.values[name] != store.values[name] {
            for (sign, value) in [("-", snapshot.values[name]), ("+", store.values[name])] {
                guard let value else { continue }
                table.rows.append(.init(fields: [sign, name, value.type.description], value: ValueText.plain(value)))
            }
        }
        for name in Set(snapshot.declarations.keys).union(store.declarations.keys).sorted()
        where snapshot.declarations[name] != store.declarations[name] {
            for (sign, declaration) in [("-", snapshot.declarations[name]), ("+", store.declarations[name])] {
                guard let declaration else { continue }
                let initial = declaration.initialValue.map { ValueText.plain($0) } ?? "null"
                table.rows.append(.init(fields: [sign, name, declaration.type.description], value: initial, note: "(declared)"))
            }
        }
        table.print(environment: context.environment)
        return table.rows.isEmpty ? 0 : 1  // as diff(1) does
    }

    static let migrate = Command(
        spec: CommandSpec(
            name: "migrate", summary: "Copy every value and declaration into another store (any backend).",
            usage: "prefs-tool [--store PATH] migrate --to PATH [--to-namespace NAME] [--overwrite]",
            help: """
                The source is untouched. The target is created when missing, and removed again when the copy fails. A key the target already holds with another
                value is a conflict (exit 65, nothing written) unless --overwrite. The target cannot be the source store
                itself or one of its files (exit 64).
                A PostgreSQL target (--to postgresql://…) takes its namespace from --to-namespace, else from --namespace
                (or $PREFS_NAMESPACE): one server's namespaces are copied into each other with --to the same URL and
                --to-namespace.
                """,
            options: ["to", "to-namespace"], flags: ["overwrite"])
    ) { arguments, context in
        guard let targetPath = arguments.option("to") else { throw ToolError.usage("missing --to PATH", context.usage) }
        let targetNamespace = arguments.option("to-namespace")
        if targetNamespace != nil, !StoreLocator.isPostgreSQL(targetPath) {
            throw ToolError.usage("--to-namespace names a namespace of a PostgreSQL target (--to postgresql://…), not of \(targetPath)", context.usage)
        }
        if targetNamespace?.isEmpty == true { throw ToolError.usage("option '--to-namespace' needs a name, not an empty value", context.usage) }
        if let suffix = context.store.ownFile(targetPath) {
            throw ToolError.usage(
                "refusing to migrate to \(targetPath): it is \(context.store.describeOwnFile(suffix, as: "the source store")); nothing was written",
                context.usage)
        }
        // The source is checked too: a damaged page could hide values from the copy without an error.
        let source = try context.store.open(checked: true)
        let values = try source.snapshot()
        do { try StoreArchive.validate(values, source: context.store.path) } catch { throw ToolError(error) }
        let declarations = try source.declaredKeys()
        let locator = try StoreLocator(
            GlobalOptions(store: targetPath, createDirectories: context.options.createDirectories, namespace: targetNamespace ?? context.options.namespace),
            environment: context.environment)
        if let from = context.store.postgreSQL, let to = locator.postgreSQL, from.conninfo == to.conninfo, from.namespace == to.namespace {
            throw ToolError.usage(
                "refusing to migrate to \(locator.displayName): it is the source store (give --to-namespace NAME to copy into another namespace); nothing was written",
                context.usage)
        }
        // A new target that the copy then fails to fill (a value the target refuses, an I/O error) is removed again
        // (a file store: a PostgreSQL namespace is left as the failed transaction left it, unchanged).
        let created = locator.postgreSQL == nil ? NewStoreFiles(path: locator.path) : nil
        var target: Prefs?
        do {
            let opened = try locator.open(create: true, checked: true)
            target = opened
            let existing = try opened.snapshot()
            let conflicts = values.keys.filter { existing[$0] != nil && existing[$0] != values[$0] }.sorted()
            if !conflicts.isEmpty && !arguments.flag("overwrite") {
                throw ToolError.data(
                    "the target already holds other values for \(conflicts.map(ValueText.quoted).joined(separator: ", ")); nothing was written (use --overwrite)"
                )
            }
            // Values and declarations in one step, as the source holds them (a value that does not fit its
            // declaration is copied as it is: the copy reads as the source does).
            try opened.importArchive(StoreArchive(values: values, declarations: declarations), checkingDeclarations: false)
        } catch {
            try? target?.close()  // the failure being reported is the one that matters
            created?.remove()
            throw error
        }
        Terminal.note(
            "copied \(values.count) value\(values.count == 1 ? "" : "s") and \(declarations.count) declaration\(declarations.count == 1 ? "" : "s") to \(locator.displayName)"
        )
        return 0
    }

    /// The bytes of `source` (`-`: stdin). Only a regular file is read: a FIFO or a device is refused (exit 65) rather
    /// than waited on or read for ever, and a directory or a missing file is an I/O error (exit 74).
    static func read(_ source: String) throws -> Data {
        if source == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do {
            guard let data = try StoreArchive.read(contentsOf: source) else { throw ToolError.io("cannot read \(source): no such file") }
            return data
        } catch let error as PrefsError {
            throw ToolError(error)
        }
    }

    /// Replaces the file at `path` atomically with mode 0600 (``StoreArchive/write(_:to:)``: no other user can read
    /// the export while it is written). A `path` that is a symbolic link is written through, as a shell's `>` and `cp`
    /// do: the link stays and its target is replaced; but not a link, nor a folder, that another user controls (exit
    /// 74).
    static func write(_ data: Data, to path: String) throws {
        do {
            try StoreArchive.write(data, to: path)
        } catch {
            throw ToolError.io("cannot write \(path): \(error)")
        }
    }
}

/// What a document that is not an export most likely is, and the command that reads it.
enum ImportHint {
    /// A usage error pointing to the right command, for a property list or `list --json` output given to `import`.
    static func forDocument(_ data: Data, source: String, usage: String) -> ToolError? {
        let start = data.prefix(512)
        let text = String(decoding: start, as: UTF8.self).drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        let xmlPropertyList = (text.hasPrefix("<?xml") || text.hasPrefix("<!DOCTYPE")) && text.contains("<plist") || text.hasPrefix("<plist")
        if start.starts(with: Data("bplist".utf8)) || xmlPropertyList {
            let file = source == "-" ? "FILE" : ArgumentParser.shellQuoted(source)
            return .usage("\(source == "-" ? "<stdin>" : source) is a property list; did you mean 'prefs-tool import --plist \(file)'?", usage)
        }
        guard case .object(let members)? = try? JSON.parse(data), !members.isEmpty,
            members["formatVersion"] == nil,
            members.values.allSatisfy({ entry in
                guard case .object(let fields) = entry else { return false }
                // With "source" since list tells where a value comes from; without it, an earlier release's output.
                return Set(fields.keys).subtracting(["source"]) == ["type", "value", "initial", "stored"]
            })
        else { return nil }
        return .data(
            "\(source == "-" ? "<stdin>" : source) is the output of 'prefs-tool list --json', which 'import' does not read; write a snapshot to import with 'prefs-tool export FILE'"
        )
    }
}
