import Foundation
import Prefs

/// Reads a UserDefaults property list (XML or binary) as values a `Prefs` store can hold.
///
/// UserDefaults keeps a domain in one file: `$XDG_CONFIG_HOME/NAME.plist` (default `~/.config/NAME.plist`) with
/// swift-corelibs-foundation, `Library/Preferences/BUNDLE-ID.plist` in an Apple app's container. Every top-level
/// key becomes one stored value, mapped as ``PropertyListValue`` describes. A value Prefs cannot hold (a key name
/// it rejects, a value over `maximumValueBytes`, an integer no stored type holds exactly) is listed in
/// `Contents.unsupported`, never dropped silently. Data holding a URL archived by `NSKeyedArchiver` (how Apple's
/// UserDefaults stores `set(url, forKey:)`) is read as that URL, and noted; other archived data is kept as data, and noted.
///
/// ```swift
/// let contents = try PropertyListImport.read(PropertyListImport.userDefaultsFile(named: "com.example.app"))
/// try prefs.setStoredValues(contents.values)
/// for problem in contents.unsupported { print(problem) }
/// ```
/// To import into a store in one step, with change notifications, use ``PrefsDefaults/importPropertyList(at:replacingExisting:)``.
public enum PropertyListImport {
    /// Why a file could not be imported. Nothing is written to a store when reading fails.
    ///
    /// ```swift
    /// catch let error as PropertyListImport.Error { print(error) }   // /tmp/x.plist: not a property list: …
    /// ```
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The file could not be read (missing, unreadable).
        case unreadable(path: String, reason: String)
        /// The file is not an XML or binary property list.
        case notAPropertyList(path: String, reason: String)
        /// The file is a property list, but its root is not a dictionary, so it is not a defaults domain.
        case notADictionary(path: String, found: String)

        /// The path of the file concerned.
        public var path: String {
            switch self {
            case .unreadable(let path, _), .notAPropertyList(let path, _), .notADictionary(let path, _): path
            }
        }

        /// `PATH: what is wrong`.
        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "\(path): cannot read the file: \(reason)"
            case .notAPropertyList(let path, let reason): "\(path): not a property list: \(reason)"
            case .notADictionary(let path, let found): "\(path): the property list holds \(found), not a dictionary of defaults"
            }
        }
    }

    /// A key whose value was not imported, and why.
    ///
    /// ```swift
    /// print(problem)   // "huge": value for key "huge" is 2000000 bytes; the limit is 1048576
    /// ```
    public struct Unsupported: Sendable, Hashable, CustomStringConvertible {
        /// The key in the property list.
        public var key: String
        /// Why its value was not imported.
        public var reason: String

        /// `"KEY": reason`.
        public var description: String { "\(PrefsError.quoted(key)): \(reason)" }
    }

    /// Something worth knowing about a key that was imported (an archived URL read as a URL, archived data kept as data).
    ///
    /// ```swift
    /// print(note)   // "homepage": a URL archived by NSKeyedArchiver, imported as url
    /// ```
    public struct Note: Sendable, Hashable, CustomStringConvertible {
        /// The key in the property list.
        public var key: String
        /// What happened to its value.
        public var text: String

        /// `"KEY": text`.
        public var description: String { "\(PrefsError.quoted(key)): \(text)" }
    }

    /// What a property list holds, as stored values.
    ///
    /// ```swift
    /// let contents = try PropertyListImport.read(url)
    /// contents.values["dialog_neverAgain"]   // bool true
    /// ```
    public struct Contents: Sendable, Hashable {
        /// The importable values by key.
        public var values: [String: StoredValue]
        /// The keys that cannot be imported, sorted by key.
        public var unsupported: [Unsupported]
        /// Notes on imported keys, sorted by key.
        public var notes: [Note]
    }

    // MARK: - Reading

    /// Reads the property list at `url`. Throws `Error` when the file cannot be read, is not an XML or binary
    /// property list, or does not hold a dictionary.
    ///
    /// ```swift
    /// let contents = try PropertyListImport.read(URL(fileURLWithPath: "Library/Preferences/com.example.app.plist"))
    /// ```
    public static func read(_ url: URL) throws(Error) -> Contents {
        let path = url.path
        let data: Data
        do {
            guard let (contents, _) = try FileSystem.contents(of: path) else {
                throw Error.unreadable(path: path, reason: "no such file")
            }
            data = contents
        } catch let error as Error {
            throw error
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        return try read(data, path: path)
    }

    /// Reads a property list from memory; `path` names it in errors.
    ///
    /// ```swift
    /// let contents = try PropertyListImport.read(data, path: "upload.plist")
    /// ```
    public static func read(_ data: Data, path: String) throws(Error) -> Contents {
        switch BinaryPropertyListScan.scan(data) {
        case .notBinary, .safe: break
        case .containsSet:
            throw .notAPropertyList(path: path, reason: "it holds a set, which UserDefaults never writes (and which this platform's reader cannot read safely)")
        case .malformed(let what):
            throw .notAPropertyList(path: path, reason: "a damaged binary property list: \(what)")
        }
        var format = PropertyListSerialization.PropertyListFormat.xml
        let root: Any
        do {
            root = try PropertyListSerialization.propertyList(from: data, options: [], format: &format)
        } catch {
            throw .notAPropertyList(path: path, reason: data.isEmpty ? "the file is empty" : "\(error.localizedDescription)")
        }
        guard format == .xml || format == .binary else {
            throw .notAPropertyList(path: path, reason: "it parses only as an OpenStep text property list; UserDefaults writes XML or binary")
        }
        guard let domain = root as? [String: Any] else {
            throw .notADictionary(path: path, found: kindName(of: root))
        }
        return contents(of: domain)
    }

    /// A defaults domain's values as stored values: each top-level key becomes one, or is listed as unsupported.
    static func contents(of domain: [String: Any]) -> Contents {
        var contents = Contents(values: [:], unsupported: [], notes: [])
        for (key, value) in domain {
            if let problem = KeyName.legacyProblem(with: key) {
                contents.unsupported.append(Unsupported(key: key, reason: problem))
                continue
            }
            do {
                let stored = try storedValue(for: value, key: key, notes: &contents.notes)
                try Prefs.checkLimits(stored, key: key)
                contents.values[key] = stored
            } catch {
                contents.unsupported.append(Unsupported(key: key, reason: "\(error)"))
            }
        }
        contents.unsupported.sort { $0.key < $1.key }
        contents.notes.sort { $0.key < $1.key }
        return contents
    }

    /// Where UserDefaults keeps the domain `name` for this user: `$XDG_CONFIG_HOME/NAME.plist` (an absolute
    /// `XDG_CONFIG_HOME`, else `~/.config`) with swift-corelibs-foundation; `~/Library/Preferences/NAME.plist` on Apple platforms.
    ///
    /// ```swift
    /// PropertyListImport.userDefaultsFile(named: "com.example.app")   // /home/me/.config/com.example.app.plist
    /// ```
    public static func userDefaultsFile(named name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let file = name + ".plist"
        #if canImport(Darwin)
        return URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Library/Preferences").appendingPathComponent(file)
        #else
        let config =
            Prefs.Storage.configDirectory(environment: environment)
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".config")
        return config.appendingPathComponent(file)
        #endif
    }

    // MARK: - Archived values

    /// One top-level value, reading archived URL data as a URL.
    private static func storedValue(for value: Any, key: String, notes: inout [Note]) throws(PropertyListValue.Unsupported) -> StoredValue {
        if let data = value as? Data, let classes = archivedClassNames(in: data) {
            if let url = archivedURL(in: data) {
                notes.append(Note(key: key, text: "a URL archived by NSKeyedArchiver, imported as url"))
                return url.storedValue()
            }
            let names = classes.isEmpty ? "unknown classes" : classes.joined(separator: ", ")
            notes.append(Note(key: key, text: "data archived by NSKeyedArchiver (\(names)), imported as data"))
        }
        return try PropertyListValue.encode(value)
    }

    /// The class names in an `NSKeyedArchiver` archive, or nil when `data` is not one.
    static func archivedClassNames(in data: Data) -> [String]? {
        guard BinaryPropertyListScan.scan(data) == .safe else { return nil }  // not a sound binary plist: kept as data
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            return nil  // data that merely starts like a binary plist: it is kept as data
        }
        guard let archive = plist as? [String: Any], archive["$archiver"] as? String == "NSKeyedArchiver" else { return nil }
        let objects = archive["$objects"] as? [Any] ?? []
        let names = objects.compactMap { ($0 as? [String: Any])?["$classname"] as? String }
        return Array(Set(names)).sorted()
    }

    /// The URL in data archived by `NSKeyedArchiver` with an `NSURL` root, or nil (the caller keeps the data).
    ///
    /// Decoded by hand, `NS.relative` against `NS.base` as `NSURL(coder:)` does: swift-corelibs-foundation's
    /// `NSKeyedUnarchiver` traps (index out of range) on an archive whose UIDs point past `$objects`, and these
    /// bytes come from a file another program wrote. Found by the fuzzer (`Fuzz/`).
    static func archivedURL(in data: Data) -> URL? {
        guard let archive = KeyedArchive(data), case .dictionary(let top)? = archive.list.object(archive.topReference),
            let rootReference = top["root"], case .uid(let root)? = archive.list.object(rootReference)
        else { return nil }
        return archive.url(at: root, depth: 0)
    }

    /// An `NSKeyedArchiver` archive read with `BinaryPropertyList`: `$objects` and `$top`.
    private struct KeyedArchive {
        let list: BinaryPropertyList
        /// The references of `$objects`, which UIDs index.
        let objects: [Int]
        let topReference: Int

        init?(_ data: Data) {
            guard let list = BinaryPropertyList(data), case .dictionary(let archive)? = list.object(list.top),
                let archiver = archive["$archiver"], list.object(archiver) == .string("NSKeyedArchiver"),
                let objectsReference = archive["$objects"], case .array(let objects)? = list.object(objectsReference),
                let topReference = archive["$top"]
            else { return nil }
            self.list = list
            self.objects = objects
            self.topReference = topReference
        }

        /// The object a member's UID names, through `$objects`.
        func object(_ members: [String: Int], _ key: String) -> BinaryPropertyList.Object? {
            guard let reference = members[key], case .uid(let uid)? = list.object(reference), objects.indices.contains(uid) else { return nil }
            return list.object(objects[uid])
        }

        /// The `NSURL` at `$objects[uid]`; `depth` bounds a chain of base URLs.
        func url(at uid: Int, depth: Int) -> URL? {
            guard depth < 8, objects.indices.contains(uid), case .dictionary(let members)? = list.object(objects[uid]),
                case .dictionary(let classMembers)? = object(members, "$class"), let nameReference = classMembers["$classname"],
                list.object(nameReference) == .string("NSURL"),
                case .string(let relative)? = object(members, "NS.relative")
            else { return nil }
            var base: URL?
            if let baseReference = members["NS.base"], case .uid(let baseUID)? = list.object(baseReference), baseUID != 0 {
                guard let resolved = url(at: baseUID, depth: depth + 1) else { return nil }
                base = resolved
            }
            return URL(string: relative, relativeTo: base)?.absoluteURL
        }
    }

    private static func kindName(of value: Any) -> String {
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return PropertyListValue.isBoolean(number) ? "a boolean" : "a number"
        }
        return switch value {
        case is Bool: "a boolean"
        case is String: "a string"
        case is [Any]: "an array"
        case is Data: "data"
        case is Date: "a date"
        default: "a \(type(of: value))"
        }
    }
}
