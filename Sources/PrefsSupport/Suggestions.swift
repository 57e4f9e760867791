// Suggestions for a mistyped name: a key's, a feed member's, and the tool's commands, options and type names, by the
// same rules.
package enum Suggestions {
    /// "Did you mean": the closest candidate by edit distance, when it is close enough to be a typo.
    package static func nearest(to word: String, in candidates: [String]) -> String? {
        let lowered = word.lowercased()
        let scored = candidates.map { ($0, distance(lowered, $0.lowercased())) }
        // A word that starts another, or that another starts (integer → int, --stor → --store), whatever the distance.
        let prefixed = scored.filter { candidate, _ in
            let other = candidate.lowercased().drop { $0 == "-" }, plain = lowered.drop { $0 == "-" }
            return min(other.count, plain.count) >= 3 && (other.hasPrefix(plain) || plain.hasPrefix(other))
        }
        if let best = prefixed.min(by: { $0.1 < $1.1 }) { return best.0 }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, word.count / 3) ? best.0 : nil
    }

    /// The name `name` was most likely meant to be, when it looks like a typo of one of `names`: the same but for
    /// case, or one edit away (two for names of ten characters or more). Stricter than ``nearest(to:in:)``, since
    /// it warns about names that may well be meant: a name shorter than four characters, or one that differs only
    /// in its digits (`item1`, `item2`), is never a typo.
    package static func likelyTypo(of name: String, among names: [String]) -> String? {
        let lowered = name.lowercased()
        let allowed = name.count >= 10 ? 2 : 1
        let withoutDigits = lowered.filter { !$0.isNumber }
        var best: (name: String, distance: Int)?
        for candidate in Set(names).sorted() where candidate != name {
            let other = candidate.lowercased()
            if other == lowered { return candidate }
            guard name.count >= 4, candidate.count >= 4, other.filter({ !$0.isNumber }) != withoutDigits else { continue }
            let distance = distance(lowered, other)
            if distance <= allowed, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Edit distance counting an insertion, a deletion, a substitution or a swap of two neighbours as one edit
    /// (optimal string alignment), so `cuont` is one edit from `count`.
    package static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}
