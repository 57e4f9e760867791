import Foundation
import Prefs

package enum Theme: String, PrefsStorable, Codable { case light, dark }

package struct WindowFrame: Codable, Hashable, PrefsStorable {
    package var width: Int
    package var height: Int
    package var title: String

    package init(width: Int, height: Int, title: String) {
        self.width = width
        self.height = height
        self.title = title
    }
}

extension Prefs.Keys {
    package static let launchCount = Key<Int>("launchCount", initial: 0)
    package static let flag = Key<Bool>("flag", initial: false)
    package static let ratio = Key<Double>("ratio", initial: 0.5)
    package static let name = Key<String>("name", initial: "anonymous")
    package static let lastLaunch = Key<Date>("lastLaunch", initial: Date(timeIntervalSince1970: 0))
    package static let blob = Key<Data>("blob", initial: Data())
    package static let homepage = Key<URL>("homepage", initial: URL(string: "https://example.com")!)
    package static let tags = Key<[String]>("tags", initial: [])
    package static let scores = Key<[String: Int]>("scores", initial: [:])
    package static let visits = Key<[String: [Date]]>("visits", initial: [:])
    package static let nickname = Key<String?>("nickname")
    package static let theme = Key<Theme>("theme", initial: .light)
    package static let frame = Key<WindowFrame>("frame", initial: WindowFrame(width: 800, height: 600, title: "Main"))
    package static let renamed = Key<Int>("newName", initial: 0, formerNames: ["oldName", "olderName"])
}

/// The seed's enum style (seed 001): cases with raw names and initial values.
package enum AppKey: String, PrefsKeyEnum {
    case dialogNoMore = "dialog_neverAgain"
    case lastMessageId
    case greeting

    package var initialValue: any PrefsStorable {
        switch self {
        case .dialogNoMore: false
        case .lastMessageId: 0
        case .greeting: String?.none
        }
    }
}

/// An enum key whose case holds a `Double`: a number literal written to it is an `Int`.
package enum AudioKey: String, PrefsKeyEnum {
    case volume

    package var initialValue: any PrefsStorable { 0.5 }
}
