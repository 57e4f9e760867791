import Foundation

/// Lines of `KEY TYPE VALUE`, as `list`, `watch` and `diff` print them.
///
/// In a pipe, one line per row always: fields separated by tabs, with backslash, newline, carriage return and tab
/// escaped inside them (``Terminal/field(_:)``), and a note such as `(initial)` as a last field. On a terminal, the
/// columns are aligned and the value is cut to the terminal's width with `…`, the note after it.
struct KeyTable {
    struct Row {
        /// Every field but the value, in order (`KEY`, `TYPE`); a prefix such as `+` goes in the first.
        var fields: [String]
        var value: String
        var note: String?
    }

    var rows: [Row] = []

    /// Prints the rows to stdout in the format stdout calls for.
    func print(environment: [String: String]) {
        for line in lines(terminalWidth: Terminal.standardOutputIsTerminal ? Terminal.width(environment: environment) : nil) {
            Terminal.print(line)
        }
    }

    /// The lines: tab-separated without a width, aligned and cut to `terminalWidth` columns with one.
    func lines(terminalWidth: Int?) -> [String] {
        let escaped = rows.map { row in
            Row(fields: row.fields.map(Terminal.field), value: Terminal.field(row.value), note: row.note.map(Terminal.field))
        }
        guard let width = terminalWidth else {
            return escaped.map { row in (row.fields + [row.value] + (row.note.map { [$0] } ?? [])).joined(separator: "\t") }
        }
        // Each column is as wide as its widest field, but no column takes more than half the width: a longer
        // field sticks out, and the value starts two spaces after it.
        let columns = escaped.map(\.fields.count).max() ?? 0
        let widths = (0..<columns).map { column in
            min(escaped.compactMap { $0.fields.count > column ? $0.fields[column].count : nil }.max() ?? 0, max(width / 2, 8))
        }
        return escaped.map { row in
            var line = ""
            for (column, field) in row.fields.enumerated() {
                line += field
                line += String(repeating: " ", count: max(widths[column] - field.count, 0) + 2)
            }
            // The value and the note share what is left of the width; a short note such as "(initial)" stays whole.
            let room = max(width - line.count, 2)
            var note = row.note.map { "  " + $0 } ?? ""
            if row.value.count + note.count > room, note.count > room / 3 { note = Self.cut(note, to: max(room / 3, 2)) }
            let value = Self.cut(row.value, to: room - note.count)
            return line + value + note
        }
    }

    /// `text` cut to `length` characters, the last one `…`, when it is longer.
    static func cut(_ text: String, to length: Int) -> String {
        text.count > length ? String(text.prefix(max(length - 1, 0))) + "…" : text
    }
}
