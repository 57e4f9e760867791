import Prefs

/// What the examples' checks read through the tools' API (the examples themselves use the app's API only).
enum ToolingChecks {
    /// The type a store has recorded for `key`'s declaration.
    static func declaredType(of key: String, in prefs: Prefs) throws -> ValueType? {
        try prefs.declaredKeys()[key]?.type
    }
}
