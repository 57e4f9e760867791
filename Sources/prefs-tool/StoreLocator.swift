import Foundation
import Prefs

/// Which store a command works on: `--store PATH`, else `$PREFS_STORE`, else the library's default location.
struct StoreLocator {
    var path: String
    /// Whether the store was named (by --store or $PREFS_STORE) rather than defaulted.
    var isExplicit: Bool

    init(option: String?, environment: [String: String]) {
        if let option, !option.isEmpty {
            path = option
            isExplicit = true
        } else if let variable = environment["PREFS_STORE"], !variable.isEmpty {
            path = variable
            isExplicit = true
        } else {
            path = Prefs.Storage.defaultURL(identifier: "default", environment: environment).path
            isExplicit = false
        }
    }

    var url: URL { URL(fileURLWithPath: path) }

    var exists: Bool { FileManager.default.fileExists(atPath: path) }

    /// Opens the store. A missing store is created only when `create`; otherwise it is an error (exit 74).
    /// A corrupt file is reported (exit 65) and left exactly as it is: the tool never recovers by itself.
    func open(create: Bool = false) throws -> Prefs {
        guard create || exists else {
            throw ToolError.io("no store at \(path) (give --store PATH or set PREFS_STORE)")
        }
        do {
            return try Prefs(try Prefs.Storage.file(url), pollInterval: .milliseconds(100))
        } catch {
            throw ToolError(error)
        }
    }
}
