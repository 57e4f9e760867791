import Foundation
@_spi(Tooling) import Prefs

enum Theme: String, PrefsStorable, Codable { case light, dark }

struct WindowFrame: Codable, Hashable, PrefsStorable {
    var width: Int
    var height: Int
    var title: String
}

extension Prefs.Keys {
    static let launchCount = Key<Int>("launchCount", initial: 0)
    static let flag = Key<Bool>("flag", initial: false)
    static let ratio = Key<Double>("ratio", initial: 0.5)
    static let name = Key<String>("name", initial: "anonymous")
    static let lastLaunch = Key<Date>("lastLaunch", initial: Date(timeIntervalSince1970: 0))
    static let blob = Key<Data>("blob", initial: Data())
    static let homepage = Key<URL>("homepage", initial: URL(string: "https://example.com")!)
    static let tags = Key<[String]>("tags", initial: [])
    static let scores = Key<[String: Int]>("scores", initial: [:])
    static let visits = Key<[String: [Date]]>("visits", initial: [:])
    static let nickname = Key<String?>("nickname")
    static let theme = Key<Theme>("theme", initial: .light)
    static let frame = Key<WindowFrame>("frame", initial: WindowFrame(width: 800, height: 600, title: "Main"))
    static let renamed = Key<Int>("newName", initial: 0, formerNames: ["oldName", "olderName"])
}

/// The seed's enum style (seed 001): cases with raw names and initial values.
enum AppKey: String, PrefsKeyEnum {
    case dialogNoMore = "dialog_neverAgain"
    case lastMessageId
    case greeting

    var initialValue: any PrefsStorable {
        switch self {
        case .dialogNoMore: false
        case .lastMessageId: 0
        case .greeting: String?.none
        }
    }
}

/// An enum key whose case holds a `Double`: a number literal written to it is an `Int`.
enum AudioKey: String, PrefsKeyEnum {
    case volume

    var initialValue: any PrefsStorable { 0.5 }
}
