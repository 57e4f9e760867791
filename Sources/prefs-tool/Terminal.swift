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

    /// Whether a scalar is one a terminal must not receive raw: C0 and C1 control characters (ESC among them),
    /// DEL, the line and paragraph separators, and the bidirectional overrides and isolates (which reorder what
    /// follows them on the line).
    static func isUnsafeOnTerminal(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }

    /// Text safe for a terminal: the characters ``isUnsafeOnTerminal(_:)`` names become escapes, `\n` and `\r`
    /// for line breaks and `\u{…}` for the others; tabs stay, newlines stay when `keepNewlines`.
    static func escapingControlCharacters(_ text: String, keepNewlines: Bool = false) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t": result.unicodeScalars.append(scalar)
            case "\n": result += keepNewlines ? "\n" : "\\n"
            case "\r": result += "\\r"
            case _ where isUnsafeOnTerminal(scalar): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// JSON text safe for a terminal: the characters ``isUnsafeOnTerminal(_:)`` names that the serializer writes
    /// as themselves (DEL, C1 controls, bidirectional overrides) become `\uXXXX` escapes. Outside the layout's own
    /// newlines, they only occur inside strings, where JSON reads the escape back as the same character, so the
    /// document means the same.
    static func escapingJSON(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar != "\n", isUnsafeOnTerminal(scalar) {
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A JSON document on stdout, escaped with ``escapingJSON(_:)`` when stdout is a terminal.
    static func printJSON(_ text: String) {
        print(standardOutputIsTerminal ? escapingJSON(text) : text)
    }

    /// One field of a line of `KEY TYPE VALUE`: a newline, carriage return and tab become `\n`, `\r` and `\t`, so a
    /// line is always one record and a tab always separates fields. In a pipe a backslash becomes `\\`, so the
    /// escapes read back exactly; on a terminal it stays (JSON text stays readable), and the other characters
    /// ``isUnsafeOnTerminal(_:)`` names become `\u{…}`.
    static func field(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\" where !standardOutputIsTerminal: result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where standardOutputIsTerminal && isUnsafeOnTerminal(scalar):
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` on one line: newlines and carriage returns become `\n` and `\r`.
    static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// The terminal's width in columns: `$COLUMNS` when set, else what the terminal reports, else 80.
    static func width(environment: [String: String]) -> Int {
        if let columns = environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}
