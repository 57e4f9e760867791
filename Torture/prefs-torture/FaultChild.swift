import Foundation
import Prefs

/// The other processes of the fault checks: `--child unlink|replace|rewrite|hold …`; each prints `done` at the end.
enum FaultChild {
    static func run(_ options: ChildOptions) throws {
        let path = try options.path()
        switch options.kind {
        case "unlink":
            guard unlink(path) == 0 else { throw TortureError("unlink \(path): \(String(cString: strerror(errno)))") }
        case "replace":
            // A complete new store written beside the old one, then renamed over it.
            let backend = try options.backend()
            let fresh = path + ".replacement" + (backend == .sqlite ? ".sqlite" : ".json")
            let prefs = try Prefs(backend.storage(fresh))
            try prefs.set("10", for: Prefs.Key<String?>("a"))
            try prefs.set("30", for: Prefs.Key<String?>("c"))
            try prefs.close()
            guard rename(fresh, path) == 0 else { throw TortureError("rename: \(String(cString: strerror(errno)))") }
        case "rewrite":
            // The same inode, truncated and written again, as an editor saving in place does.
            let document = """
                {"format": "prefs", "formatVersion": 1, "values": {"a": {"type": "string", "value": "11"}, "e": {"type": "string", "value": "50"}}}

                """
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(document.utf8))
            try handle.close()
        case "hold":
            // Holds the writer lock inside a transaction until stdin closes.
            let prefs = try Prefs(try options.backend().storage(path))
            try prefs.transaction { transaction in
                transaction[Prefs.Key<String?>("held")] = "yes"
                say("holding")
                _ = FileHandle.standardInput.readDataToEndOfFile()
            }
            say("released")
            try prefs.close()
        default:
            throw TortureError("unknown child kind \(options.kind)")
        }
        say("done")
    }
}
