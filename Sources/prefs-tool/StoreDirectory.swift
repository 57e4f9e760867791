import Foundation
import Prefs

/// The stores in a folder: those in the default location by bundle identifier (as `defaults domains` lists
/// domains), and those beside a path that holds none, for the "no store" error.
enum StoreDirectory {
    /// The file name endings of stores the tool opens by name.
    static let storeExtensions: Set<String> = ["json", "sqlite", "sqlite3", "db"]

    /// The stores in the default location, by identifier, sorted: `IDENTIFIER.sqlite` files on Linux, or
    /// `IDENTIFIER/prefs.sqlite` on Apple platforms (whichever layout ``Prefs/Storage/defaultURL(identifier:environment:)``
    /// gives).
    static func defaultStores(environment: [String: String]) throws -> [(identifier: String, path: String)] {
        let marker = "IDENTIFIER"
        let sample = try Prefs.Storage.defaultURL(identifier: marker, environment: environment)
        let fileManager = FileManager.default
        if sample.lastPathComponent.hasPrefix(marker) {
            // One file per identifier: IDENTIFIER.sqlite.
            let suffix = String(sample.lastPathComponent.dropFirst(marker.count))
            let directory = sample.deletingLastPathComponent()
            let names = (try? fileManager.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { $0.hasSuffix(suffix) && $0.count > suffix.count && !$0.hasPrefix(".") }.sorted().compactMap { name in
                let path = directory.appendingPathComponent(name).path
                return isRegularFile(path) ? (String(name.dropLast(suffix.count)), path) : nil
            }
        }
        // One folder per identifier: IDENTIFIER/prefs.sqlite.
        let base = sample.deletingLastPathComponent().deletingLastPathComponent()
        let names = (try? fileManager.contentsOfDirectory(atPath: base.path)) ?? []
        return names.sorted().compactMap { name in
            let path = base.appendingPathComponent(name).appendingPathComponent(sample.lastPathComponent).path
            return isRegularFile(path) ? (name, path) : nil
        }
    }

    /// The other store files in `path`'s folder, by name, sorted (sidecars and hidden files left out).
    static func stores(beside path: String) -> [String] {
        let directory = (path as NSString).deletingLastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        let own = (path as NSString).lastPathComponent
        return names.filter { name in
            name != own && !name.hasPrefix(".") && storeExtensions.contains((name as NSString).pathExtension.lowercased())
                && isRegularFile((directory as NSString).appendingPathComponent(name))
        }.sorted()
    }

    /// Whether `path` is a regular file, links followed.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// A short list for a message: at most `limit` names, then how many more.
    static func shortList(_ names: [String], limit: Int = 5) -> String {
        let shown = names.prefix(limit).joined(separator: ", ")
        return names.count > limit ? "\(shown) and \(names.count - limit) more" : shown
    }
}

extension StoreLocator {
    /// "no store at PATH", with what might have been meant: a store whose name is close, or the stores there.
    func missingStoreMessage() -> String {
        var message = "no store at \(path)"
        switch origin {
        case .defaultLocation, .app:
            // Only a hint; the default location resolved when the locator was made, so listing it does not fail for that.
            let identifiers = (try? StoreDirectory.defaultStores(environment: environment))?.map(\.identifier) ?? []
            if case .app(let identifier) = origin, let near = KeyName.nearest(to: identifier, in: identifiers) {
                return message + "; did you mean --app \(ArgumentParser.shellQuoted(near))?"
            }
            if origin == .defaultLocation { message += " (give --store PATH, --app ID or set PREFS_STORE)" }
            switch identifiers.count {
            case 0: return message
            case 1: return message + "; the default location holds one store: --app \(ArgumentParser.shellQuoted(identifiers[0]))"
            default:
                return message + "; the default location holds \(identifiers.count) stores: \(StoreDirectory.shortList(identifiers)) (see 'prefs-tool stores')"
            }
        case .path:
            let others = StoreDirectory.stores(beside: path)
            let directory = (path as NSString).deletingLastPathComponent
            if let near = KeyName.nearest(to: (path as NSString).lastPathComponent, in: others) {
                return message + "; did you mean \(directory.isEmpty ? near : (directory as NSString).appendingPathComponent(near))?"
            }
            return others.isEmpty ? message : message + "; stores there: \(StoreDirectory.shortList(others))"
        }
    }
}
