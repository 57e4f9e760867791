import Foundation

extension String {
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`, without Foundation's call where nothing is to trim: text
    /// that starts and ends with a visible ASCII character, as a launch argument does. The Foundation call (through
    /// `NSString`) cost a new process more than opening its store.
    func trimmedOfWhitespaceAndNewlines() -> String {
        let visible = UInt8(ascii: "!")...UInt8(ascii: "~")
        if let first = utf8.first, let last = utf8.last, visible.contains(first), visible.contains(last) { return self }
        return trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
