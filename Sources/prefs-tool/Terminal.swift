import Foundation

/// Standard output for data, standard error for diagnostics. Writes go straight to the file descriptors
/// (`FileHandle`, not Glibc's `stderr`, which is not concurrency-safe in Swift 6).
enum Terminal {
    static let standardOutputIsTerminal = isatty(STDOUT_FILENO) == 1

    /// Writes a line of data to stdout.
    static func print(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Writes text from a store or a feed: control characters are escaped when stdout is a terminal.
    static func printData(_ line: String) {
        print(standardOutputIsTerminal ? escapingControlCharacters(line) : line)
    }

    /// `prefs-tool: error: MESSAGE` on stderr.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("prefs-tool: error: \(escapingControlCharacters(message, keepNewlines: true))\n".utf8))
    }

    /// `prefs-tool: warning: MESSAGE` on stderr.
    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("prefs-tool: warning: \(escapingControlCharacters(message, keepNewlines: true))\n".utf8))
    }

    /// A line on stderr, as is apart from escaping.
    static func note(_ line: String) {
        FileHandle.standardError.write(Data((escapingControlCharacters(line, keepNewlines: true) + "\n").utf8))
    }

    /// Text safe for a terminal: C0 and C1 control characters (ESC among them), DEL and the bidirectional
    /// overrides become `\u{…}` escapes; tabs stay, newlines stay when `keepNewlines`.
    static func escapingControlCharacters(_ text: String, keepNewlines: Bool = false) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09: result.unicodeScalars.append(scalar)
            case 0x0A where keepNewlines: result.unicodeScalars.append(scalar)
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029:
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
