import DialogGate
import Prefs

/// An error that ends a command, with its exit code (sysexits.h numbering).
struct ToolError: Error, CustomStringConvertible {
    enum Code: Int32 {
        case notFound = 1
        case usage = 64
        case data = 65
        case io = 74
    }

    var code: Code
    var message: String
    /// The usage line printed after a usage error.
    var usage: String?

    var description: String { message }

    init(code: Code, message: String, usage: String? = nil) {
        self.code = code
        self.message = message
        self.usage = usage
    }

    static func usage(_ message: String, _ usage: String?) -> ToolError { ToolError(code: .usage, message: message, usage: usage) }
    static func data(_ message: String) -> ToolError { ToolError(code: .data, message: message) }
    static func io(_ message: String) -> ToolError { ToolError(code: .io, message: message) }

    /// Maps a library error to the tool's exit codes: bad data 65, I/O 74.
    init(_ error: any Error) {
        if let error = error as? ToolError {
            self = error
            return
        }
        if case .store(let error) = error as? DialogGateError {
            self.init(error)
            return
        }
        switch error {
        case let error as PrefsError:
            switch error {
            case .corruptStore, .unsupportedFormatVersion, .typeMismatch, .invalidKeyName, .valueTooLarge, .valueTooDeep, .encodingFailed,
                .invalidIdentifier, .unusableFolder, .appGroupUnavailable:
                self.init(code: .data, message: error.description)
            case .database where error.isDamagedStore:
                self.init(code: .data, message: error.description)
            case .database, .io, .untrustedLink, .untrustedFolder, .untrustedFile, .lockTimeout, .closed, .reentrantCall, .readOnlyStore,
                .backend:
                self.init(code: .io, message: error.description)
            }
        default:
            self.init(code: .io, message: "\(error)")
        }
    }
}
