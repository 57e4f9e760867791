// MARK: - SourceLocation

/// A position in a JSON document, for error messages.
///
/// Lines and columns are 1-based; columns count Unicode scalars, so `é` is one column. A line ends at
/// `\n`, `\r\n` or a lone `\r`. A leading byte-order mark is not counted in columns but is counted in `offset`.
///
/// ```swift
/// let location = SourceLocation(line: 2, column: 5, offset: 12)
/// print(location)   // 2:5
/// ```
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 1-based line number.
    public var line: Int
    /// The 1-based column, counted in Unicode scalars from the start of the line.
    public var column: Int
    /// The 0-based byte offset from the start of the input.
    public var offset: Int

    /// Creates a location; see the properties for the conventions.
    ///
    /// ```swift
    /// let start = SourceLocation(line: 1, column: 1, offset: 0)
    /// ```
    public init(line: Int, column: Int, offset: Int) {
        self.line = line
        self.column = column
        self.offset = offset
    }

    /// `line:column`, e.g. `3:14`.
    public var description: String { "\(line):\(column)" }

    /// Orders locations by position in the document (by `offset`).
    ///
    /// ```swift
    /// diagnostics.sort { $0.location < $1.location }
    /// ```
    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        lhs.offset < rhs.offset
    }
}

// MARK: - JSONParseError

/// Why a JSON document could not be parsed, and where.
///
/// The message names what was expected and what was found; characters that are not printable are
/// shown as `U+0007`.
///
/// ```swift
/// do {
///     _ = try JSON.parse(#"{"a": 1"#)
/// } catch {
///     print(error)   // 1:8: expected ',' or '}' after object member, found end of input
/// }
/// ```
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the problem is.
    public var location: SourceLocation
    /// What is wrong, without the location, e.g. `duplicate key "id"`.
    public var message: String
    /// For a number literal outside the range of `Int` (an integer) or of finite doubles: the byte offsets of the whole
    /// literal, so a caller that tolerates such numbers can replace it and parse again. Nil for every other error.
    public var outOfRangeNumber: Range<Int>?

    /// Creates an error.
    ///
    /// ```swift
    /// let error = JSONParseError(location: SourceLocation(line: 1, column: 1, offset: 0), message: "empty document")
    /// ```
    public init(location: SourceLocation, message: String, outOfRangeNumber: Range<Int>? = nil) {
        self.location = location
        self.message = message
        self.outOfRangeNumber = outOfRangeNumber
    }

    /// `line:column: message`, e.g. `1:1: empty document`.
    public var description: String { "\(location.line):\(location.column): \(message)" }
}

// MARK: - Line tracking

/// Converts byte offsets into line/column locations by scanning forward; cheap when queried in increasing order.
public struct JSONLineTracker {
    private let base: UnsafePointer<UInt8>?
    private let origin: Int
    private var offset: Int
    private var line = 1
    private var column = 1
    private var previousWasCR = false

    /// `origin` is the offset of the first byte after a byte-order mark (0 or 3).
    public init(base: UnsafePointer<UInt8>?, origin: Int) {
        self.base = base
        self.origin = origin
        self.offset = origin
    }

    /// The location of `target`, which must be within the buffer (or at its end).
    public mutating func location(at target: Int) -> SourceLocation {
        if target < offset {
            offset = origin
            line = 1
            column = 1
            previousWasCR = false
        }
        if let base {
            while offset < target {
                let byte = base[offset]
                if byte == 0x0A {
                    if !previousWasCR { line += 1 }
                    column = 1
                } else if byte == 0x0D {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
                previousWasCR = byte == 0x0D
                offset += 1
            }
        }
        return SourceLocation(line: line, column: column, offset: max(target, 0))
    }
}
