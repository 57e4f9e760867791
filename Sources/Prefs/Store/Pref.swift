/// A property backed by a key of a ``Prefs`` store: `@Pref(.launchCount) var launchCount`.
///
/// Reading the property reads the store (its cache); setting it writes through, like the store's subscript (a failed
/// write becomes a ``Prefs/Diagnostic``). Works in classes, structs and, marked `@ObservationIgnored`, inside
/// `@Observable` models, where reads are still tracked: the wrapper reads through an ``ObservableValue``, so a change
/// from this process or another calls `onChange` (and refreshes a SwiftUI view) once per change.
///
/// ```swift
/// extension Prefs.Keys {
///     static let volume = Key<Double>("volume", initial: 0.8)
/// }
///
/// @Observable final class PlayerModel {
///     @ObservationIgnored @Pref(.volume) var volume
/// }
///
/// let model = PlayerModel()
/// model.volume = 0.5                 // written to Prefs.standard
/// model.$volume.lookup.isStored      // true
/// try model.$volume.reset()          // back to 0.8
/// ```
///
/// Without `store:`, the wrapper uses ``Prefs/standard`` as it is when the wrapper is made: configure it at launch,
/// before making models.
///
/// `Value` is the key's ``PrefsStorable`` type; the wrapper does not require it itself (see ``ObservableValue``).
@propertyWrapper
public struct Pref<Value>: Sendable {
    /// The key and store, observed: the projected value (`$property`).
    public let projectedValue: ObservableValue<Value>

    /// On the main actor (a view model's properties), its changes are delivered on the main actor.
    public init(
        _ key: Prefs.Key<Value>, store: Prefs = .standard, isolation: isolated (any Actor)? = #isolation
    ) where Value: PrefsStorable {
        projectedValue = ObservableValue(prefs: store, key: key, onMainActor: isolation === MainActor.shared)
    }

    public var wrappedValue: Value {
        get { projectedValue.value }
        nonmutating set { projectedValue.value = newValue }
    }
}

#if canImport(SwiftUI)
import SwiftUI

/// In a SwiftUI view, `@Pref` refreshes the view when the key changes, as `@AppStorage` does: the view's body reads
/// an `Observable` object, which SwiftUI tracks. `$property.binding` gives a `Binding` for controls.
extension Pref: DynamicProperty {}

extension ObservableValue {
    /// A SwiftUI binding to the value (a failed write becomes a ``Prefs/Diagnostic``).
    public var binding: Binding<Value> {
        Binding(get: { self.value }, set: { self.value = $0 })
    }
}
#endif
