import Foundation

/// What a feed's targeting is compared with: the running app, its OS and its locale.
///
/// The app supplies its bundle identifier and version itself (on Linux there is no bundle info
/// dictionary to read them from); ``current(bundleIdentifier:appVersion:)`` fills in the rest.
///
/// ```swift
/// let context = MessageContext.current(bundleIdentifier: "com.example.app", appVersion: "1.4.2")
/// let test = MessageContext(bundleIdentifier: "com.example.app", appVersion: "1.0",
///                           osVersion: "17.2", localeIdentifier: "en_GB")
/// ```
public struct MessageContext: Sendable, Hashable, CustomStringConvertible {
    /// The app's bundle identifier, compared exactly with a message's `bundleId`.
    public var bundleIdentifier: String
    /// The app's version as the app reports it, e.g. `1.4.2`, `1.5-beta` or `2.0 (145)`: a release, then a pre-release
    /// and a build. Feed entries compare with the release (`1.5-beta` targets as `1.5`); a build entry (`"2.0 (145)"`)
    /// with the build.
    public var appVersion: String
    /// The OS version, e.g. `17.2` or `6.8.0`.
    public var osVersion: String
    /// The user's locale, e.g. `en_GB`, `pt-BR` or `de_DE@calendar=gregorian`; compared with a message's
    /// `locales` by language-tag prefix.
    public var localeIdentifier: String

    /// Creates a context from explicit values, for tests or an app that knows better.
    ///
    /// ```swift
    /// let context = MessageContext(bundleIdentifier: "com.example.app", appVersion: "2.0",
    ///                              osVersion: "17.0.1", localeIdentifier: "de_DE")
    /// ```
    public init(bundleIdentifier: String, appVersion: String, osVersion: String, localeIdentifier: String) {
        self.bundleIdentifier = bundleIdentifier
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.localeIdentifier = localeIdentifier
    }

    /// The context of this process: the OS version from `ProcessInfo.processInfo.operatingSystemVersion`
    /// (`major.minor.patch`; the kernel version on Linux) and the locale from `Locale.current.identifier`.
    ///
    /// ```swift
    /// let context = MessageContext.current(bundleIdentifier: "com.example.app", appVersion: "1.4.2")
    /// context.osVersion   // e.g. "17.2.0"
    /// ```
    public static func current(bundleIdentifier: String, appVersion: String) -> MessageContext {
        let os = ProcessInfo.processInfo.operatingSystemVersion
        return MessageContext(
            bundleIdentifier: bundleIdentifier,
            appVersion: appVersion,
            osVersion: "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)",
            localeIdentifier: Locale.current.identifier
        )
    }

    /// `com.example.app 1.4.2 on OS 17.2, locale en_GB`.
    public var description: String {
        "\(bundleIdentifier) \(appVersion) on OS \(osVersion), locale \(localeIdentifier)"
    }

    /// The locale as a lowercase language tag with `-` separators and without POSIX or `@` suffixes:
    /// `en_GB.UTF-8` → `en-gb`, `de_DE@calendar=gregorian` → `de-de`.
    ///
    /// ```swift
    /// MessageContext.normalizedLanguageTag("pt_BR")   // "pt-br"
    /// ```
    public static func normalizedLanguageTag(_ identifier: String) -> String {
        let base = identifier.prefix { $0 != "@" && $0 != "." }
        return base.lowercased().replacingOccurrences(of: "_", with: "-")
    }

    /// Whether the locale falls under `tag` (case-insensitive, `_` and `-` equivalent): the same language, and the
    /// tag's script and region when it names them. A script the identifier leaves out is inferred from its region
    /// where that is unambiguous (Chinese: `TW`, `HK`, `MO` are Hant; `CN`, `SG` and none are Hans), so Apple's
    /// `zh-Hant_TW` and Linux's `zh_TW` are both covered by `zh-TW` and by `zh-Hant`. `en` covers `en`, `en-GB` and
    /// `en_US`, but not `eng`.
    ///
    /// ```swift
    /// MessageContext.locale("en_GB", isCoveredBy: "en")          // true
    /// MessageContext.locale("en_GB", isCoveredBy: "en-US")       // false
    /// MessageContext.locale("zh-Hant_TW", isCoveredBy: "zh-TW")  // true
    /// MessageContext.locale("zh_TW", isCoveredBy: "zh-Hant")     // true
    /// ```
    public static func locale(_ identifier: String, isCoveredBy tag: String) -> Bool {
        let locale = LanguageTag(normalizedLanguageTag(identifier)), wanted = LanguageTag(normalizedLanguageTag(tag))
        guard !wanted.language.isEmpty, locale.language == wanted.language else { return false }
        if !wanted.others.isEmpty {  // variants and extensions: compare as a prefix, subtag by subtag
            let full = normalizedLanguageTag(identifier), prefix = normalizedLanguageTag(tag)
            return full == prefix || full.hasPrefix(prefix + "-")
        }
        if let script = wanted.script, locale.script ?? locale.inferredScript != script { return false }
        if let region = wanted.region, locale.region != region { return false }
        return true
    }
}

/// A normalized language tag's parts: `zh-hant-tw` is language `zh`, script `hant`, region `tw`.
private struct LanguageTag {
    var language: String
    var script: String?
    var region: String?
    /// Any other subtags (variants, extensions).
    var others: [String] = []

    init(_ normalized: String) {
        var parts = normalized.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        language = parts.isEmpty ? "" : parts.removeFirst()
        if let first = parts.first, first.count == 4, first.allSatisfy(\.isLetter) { script = parts.removeFirst() }
        if let first = parts.first, (first.count == 2 && first.allSatisfy(\.isLetter)) || (first.count == 3 && first.allSatisfy(\.isNumber)) {
            region = parts.removeFirst()
        }
        others = parts
    }

    /// The script the region implies, where it is unambiguous.
    var inferredScript: String? {
        guard language == "zh" else { return nil }
        switch region {
        case "tw", "hk", "mo": return "hant"
        case "cn", "sg", "my", nil: return "hans"
        default: return nil
        }
    }
}
