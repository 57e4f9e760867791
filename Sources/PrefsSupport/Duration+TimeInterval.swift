import Foundation

extension Duration {
    /// Seconds as a `TimeInterval`.
    package var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
