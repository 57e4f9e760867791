import Foundation
import Prefs
import PrefsJSON

/// `--arguments ARGS` of `get` and `list`: what an app launched with those arguments reads (its argument domain).
///
/// The tool never reads its own arguments as a domain (its stores are opened with `launchArguments: []`): an app's
/// arguments are another process's, so they are given here, as a scheme or a QA script passes them.
struct LaunchArgumentsOption {
    /// The arguments, split as a shell splits them.
    let words: [String]
    /// The pairs' values by name, as the library reads them.
    let values: [String: StoredValue]

    /// Splits `text` into arguments as a POSIX shell does (and Xcode splits a scheme's "Arguments Passed On Launch"
    /// line): words separated by white space, `'…'` taken literally, `"…"` with `\"`, `\\`, `\$` and `` \` ``
    /// escaped, a backslash outside quotes escaping the next character.
    init(_ text: String) throws(ToolError) {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped {
                if quote == "\"", !"\"\\$`".contains(character) { word.append("\\") }
                word.append(character)
                escaped = false
            } else if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\", open == "\"" {
                    escaped = true
                } else {
                    word.append(character)
                }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == "\\" {
                escaped = true
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if quote != nil || escaped { throw ToolError.usage("--arguments: an unterminated quote or a trailing backslash in \(ValueText.quoted(text))", nil) }
        if inWord { words.append(word) }
        self.words = words
        values = LaunchArguments.domain(words)
    }

    /// What the app reads for `name` from its argument, as its key's type reads it (`type`: declared or stored, nil when
    /// neither is known: the value as given); nil when no argument names the key. An argument that the key cannot
    /// read is reported as a warning, and is nil: the app reads the key as without it.
    func value(forKey name: String, type: ValueType?) -> StoredValue? {
        guard let argument = values[name] else { return nil }
        guard let type else { return argument }
        do {
            return try LaunchArguments.converted(argument, to: type)
        } catch {
            Terminal.warning(
                "the launch argument -\(name) \(error.stored.preview()) cannot be read as \(type) (\(error.reason)): ignored, the app reads \(ValueText.quoted(name)) as without it"
            )
            return nil
        }
    }
}
