@testable import Prefs
import Testing

/// The store's observers on their own (``ObserverHub``): who is told of which change.
@Suite("Observer hub")
struct ObserverHubTests {
    static func observer(_ names: [String], lossless: Bool = false) -> Prefs.Observer {
        Prefs.Observer(keys: names.map { Prefs.Key<Int>($0, initial: 0) }, isLossless: lossless) { _ in }
    }

    static func changes(_ names: [String]) -> Changeset {
        var changes = Changeset()
        for name in names { changes.values[name] = .remove }
        return changes
    }

    static func ids(_ observers: [Prefs.Observer]) -> Set<ObjectIdentifier> {
        Set(observers.map(ObjectIdentifier.init))
    }

    @Test("a change goes to the observers of the keys it touches, lossless and coalescing apart; nil to every one")
    func fanOut() {
        var hub = ObserverHub()
        let a = Self.observer(["a"])
        let ab = Self.observer(["a", "b"], lossless: true)
        let c = Self.observer(["c"], lossless: true)
        for observer in [a, ab, c] { hub.add(observer) }
        #expect(Self.ids(hub.observers(of: Self.changes(["a"]), lossless: false)) == Self.ids([a]))
        #expect(Self.ids(hub.observers(of: Self.changes(["a"]), lossless: true)) == Self.ids([ab]))
        #expect(Self.ids(hub.observers(of: Self.changes(["b", "c"]), lossless: true)) == Self.ids([ab, c]))
        #expect(hub.observers(of: Self.changes(["d"]), lossless: true).isEmpty)
        #expect(hub.observers(of: Self.changes(["b"]), lossless: false).isEmpty)
        #expect(Self.ids(hub.observers(of: nil, lossless: true)) == Self.ids([ab, c]))
        #expect(Self.ids(hub.observers(of: nil, lossless: false)) == Self.ids([a]))
    }

    @Test("an observer is added once, removed, and all are handed back when the store finishes them")
    func membership() {
        var hub = ObserverHub()
        #expect(hub.isEmpty)
        let a = Self.observer(["a"])
        let b = Self.observer(["b"])
        hub.add(a)
        hub.add(a)
        hub.add(b)
        #expect(hub.count == 2)
        hub.remove(a)
        #expect(hub.count == 1 && hub.observers(of: Self.changes(["a"]), lossless: false).isEmpty)
        hub.remove(a)
        #expect(hub.count == 1)
        hub.add(a)
        let removed = hub.removeAll()
        #expect(Self.ids(removed) == Self.ids([a, b]))
        let none = hub.removeAll()
        #expect(hub.isEmpty && none.isEmpty)
    }
}
