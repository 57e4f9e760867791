import PrefsSupport

// Suggestions for a mistyped key name, for tools: the rules live in PrefsSupport's `Suggestions`, shared with the feed
// decoder's and the tool's own "did you mean".
extension KeyName {
    /// "Did you mean": the closest candidate by edit distance, when it is close enough to be a typo.
    public static func nearest(to word: String, in candidates: [String]) -> String? {
        Suggestions.nearest(to: word, in: candidates)
    }

    /// The name `name` was most likely meant to be, when it looks like a typo of one of `names`: the same but for
    /// case, or one edit away (two for names of ten characters or more). Stricter than ``nearest(to:in:)``, since
    /// it warns about names that may well be meant: a name shorter than four characters, or one that differs only
    /// in its digits (`item1`, `item2`), is never a typo.
    public static func likelyTypo(of name: String, among names: [String]) -> String? {
        Suggestions.likelyTypo(of: name, among: names)
    }

    /// Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbours as one edit
    /// (optimal string alignment), so `cuont` is one edit from `count`.
    public static func distance(_ a: String, _ b: String) -> Int {
        Suggestions.distance(a, b)
    }
}
