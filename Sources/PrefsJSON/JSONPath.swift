/// The position of a value inside a JSON document, written like `$[0].appVersions[2]`.
///
/// Keys that are identifiers (ASCII letters, digits and `_`, not starting with a digit) are written
/// `.key`; any other key is written as a quoted JSON string in brackets, e.g. `$["weird key"]`.
/// Paths order component by component, a path before its extensions, indexes before keys, keys by
/// UTF-8 bytes, so sorting diagnostics by path gives a stable order.
///
/// ```swift
/// let path: JSONPath = [.index(0), .key("appVersions"), .index(2)]
/// print(path)                          // $[0].appVersions[2]
/// print(JSONPath.root / "weird key")   // $["weird key"]
/// ```
public struct JSONPath: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByArrayLiteral {
    /// One step into an object or an array.
    ///
    /// ```swift
    /// let steps: [JSONPath.Component] = [.key("items"), .index(3)]
    /// ```
    public enum Component: Sendable, Hashable, Comparable {
        /// The member named `key` of an object.
        case key(String)
        /// The element at `index` (0-based) of an array.
        case index(Int)

        /// Indexes sort before keys; indexes numerically, keys by UTF-8 bytes.
        ///
        /// ```swift
        /// JSONPath.Component.index(9) < .key("a")   // true
        /// ```
        public static func < (lhs: Component, rhs: Component) -> Bool {
            switch (lhs, rhs) {
            case let (.index(left), .index(right)): left < right
            case let (.key(left), .key(right)): JSON.keyPrecedes(left, right)
            case (.index, .key): true
            case (.key, .index): false
            }
        }
    }

    /// The steps from the document root, outermost first.
    ///
    /// ```swift
    /// (JSONPath.root / "items" / 0).components   // [.key("items"), .index(0)]
    /// ```
    public var components: [Component]

    /// Creates a path from its steps.
    ///
    /// ```swift
    /// let path = JSONPath([.key("messages"), .index(0)])
    /// ```
    public init(_ components: [Component] = []) {
        self.components = components
    }

    /// Creates a path from an array literal of steps.
    ///
    /// ```swift
    /// let path: JSONPath = [.key("a"), .index(1)]
    /// ```
    public init(arrayLiteral elements: Component...) {
        self.components = elements
    }

    /// The path of the document itself, `$`.
    ///
    /// ```swift
    /// JSONPath.root.description   // "$"
    /// ```
    public static var root: JSONPath { JSONPath() }

    /// This path extended by one step.
    ///
    /// ```swift
    /// JSONPath.root.appending(.key("id"))   // $.id
    /// ```
    public func appending(_ component: Component) -> JSONPath {
        JSONPath(components + [component])
    }

    /// The path of the member `key` below `path`.
    ///
    /// ```swift
    /// JSONPath.root / "settings" / "theme"   // $.settings.theme
    /// ```
    public static func / (path: JSONPath, key: String) -> JSONPath {
        path.appending(.key(key))
    }

    /// The path of the element `index` below `path`.
    ///
    /// ```swift
    /// JSONPath.root / "items" / 2   // $.items[2]
    /// ```
    public static func / (path: JSONPath, index: Int) -> JSONPath {
        path.appending(.index(index))
    }

    /// The path without its last step, or nil for the root.
    ///
    /// ```swift
    /// (JSONPath.root / "a" / 1).parent   // $.a
    /// ```
    public var parent: JSONPath? {
        components.isEmpty ? nil : JSONPath(Array(components.dropLast()))
    }

    /// `$` followed by `.key`, `["quoted key"]` and `[index]` steps.
    ///
    /// ```swift
    /// (JSONPath.root / 0 / "appVersions" / 2).description   // "$[0].appVersions[2]"
    /// ```
    public var description: String {
        var text = "$"
        for component in components {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key) where Self.isIdentifier(key):
                text += "." + key
            case .key(let key):
                text += "[" + JSONWriter.quoted(key) + "]"
            }
        }
        return text
    }

    /// Orders paths component by component; a path sorts before its extensions.
    ///
    /// ```swift
    /// JSONPath.root / "a" < JSONPath.root / "a" / 0   // true
    /// ```
    public static func < (lhs: JSONPath, rhs: JSONPath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components)
    }

    private static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return key.utf8.allSatisfy(\.isASCIIWordByte)
    }
}
