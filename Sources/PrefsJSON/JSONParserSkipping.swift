// MARK: - Kept values

/// What ``JSONParserCore/skipTree(depth:afterComma:)`` keeps between the values it checks, so that checking one after
/// another reuses the same buffers.
struct JSONSkipState {
    /// The open containers of the value being checked, innermost last: true for an object, false for an array.
    var containers: [Bool] = []
    /// The plain keys (ASCII, no escape) of the open objects that have only such keys, fewer than `setThreshold`, as
    /// byte ranges of the input, innermost object last. Two such keys are equal strings exactly when their bytes are.
    private var plainKeys: [Range<Int>] = []
    /// Per open object: where its keys start in `plainKeys`; -1 once it has another key or `setThreshold` keys, and
    /// all its keys are strings in `keySets`.
    private var objectStarts: [Int] = []
    /// The keys of the open objects whose keys are strings, innermost last: compared as `String`s, canonical
    /// equivalence included, as `JSONPlainBuilder` compares them (`"\u212A"`, the Kelvin sign, is the key `"K"`).
    private var keySets: [Set<String>] = []
    private static var setThreshold: Int { 16 }

    /// Forgets what a value that failed to parse left open.
    mutating func reset() {
        containers.removeAll(keepingCapacity: true)
        plainKeys.removeAll(keepingCapacity: true)
        objectStarts.removeAll(keepingCapacity: true)
        keySets.removeAll(keepingCapacity: true)
    }

    mutating func beginObject() {
        objectStarts.append(plainKeys.count)
    }

    /// Adds a plain key (its bytes, between its quotes, at `range` of `base`) to the innermost object; false when the
    /// object has it already.
    mutating func insertPlainKey(_ range: Range<Int>, of base: UnsafePointer<UInt8>) -> Bool {
        let start = objectStarts[objectStarts.count - 1]
        guard start >= 0, plainKeys.count - start < Self.setThreshold else {
            return insertKey(String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self), of: base)
        }
        for index in start..<plainKeys.count {
            let other = plainKeys[index]
            if other.count == range.count, Self.bytesEqual(base + other.lowerBound, base + range.lowerBound, count: range.count) { return false }
        }
        plainKeys.append(range)
        return true
    }

    /// Adds a key to the innermost object, compared as a `String`; false when the object has it already.
    mutating func insertKey(_ key: String, of base: UnsafePointer<UInt8>) -> Bool {
        let last = objectStarts.count - 1
        let start = objectStarts[last]
        if start >= 0 {
            // From here on this object's keys are strings: those read so far too.
            var strings = Set<String>()
            for range in plainKeys[start...] {
                strings.insert(String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self))
            }
            plainKeys.removeSubrange(start...)
            keySets.append(strings)
            objectStarts[last] = -1
        }
        return keySets[keySets.count - 1].insert(key).inserted
    }

    @inline(__always)
    private static func bytesEqual(_ left: UnsafePointer<UInt8>, _ right: UnsafePointer<UInt8>, count: Int) -> Bool {
        for index in 0..<count where left[index] != right[index] { return false }
        return true
    }

    mutating func endObject() {
        let start = objectStarts.removeLast()
        if start >= 0 {
            plainKeys.removeSubrange(start...)
        } else {
            keySets.removeLast()
        }
    }
}

extension JSONParserCore {
    /// Checks the value starting at `pos` exactly as `parseTree` parses it, without handing the builder anything: the
    /// same errors at the same places (nesting counted from the `depth` containers open around it, duplicate keys
    /// rejected). Leaves `pos` after the value. `afterComma`: the value follows a comma, as `parseTree` tracks it.
    ///
    /// Keep it in step with `parseTree`: the tests check both against the same bad inputs.
    mutating func skipTree(depth: Int, afterComma: Bool) throws(JSONParseError) {
        var state = JSONSkipState()
        swap(&state, &skipState)  // the buffers of earlier calls, owned here alone
        defer { swap(&state, &skipState) }
        if !state.containers.isEmpty { state.reset() }
        var afterComma = afterComma
        valueLoop: while true {
            guard pos < end else { throw unexpected("a value", at: pos) }
            switch base[pos] {
            case UInt8(ascii: "{"):
                guard depth + state.containers.count < maxDepth else { throw fail("nesting deeper than \(maxDepth) levels", at: pos) }
                pos += 1
                skipWhitespace()
                if pos < end, base[pos] == UInt8(ascii: "}") {
                    pos += 1
                } else {
                    state.beginObject()
                    try skipMemberKey(afterComma: false, &state)
                    state.containers.append(true)
                    afterComma = false
                    continue valueLoop
                }
            case UInt8(ascii: "["):
                guard depth + state.containers.count < maxDepth else { throw fail("nesting deeper than \(maxDepth) levels", at: pos) }
                pos += 1
                skipWhitespace()
                if pos < end, base[pos] == UInt8(ascii: "]") {
                    pos += 1
                } else {
                    state.containers.append(false)
                    afterComma = false
                    continue valueLoop
                }
            case UInt8(ascii: "\""):
                _ = try skipString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                _ = try scanNumber()
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                try skipLiteral()
            case UInt8(ascii: "]") where afterComma:
                throw unexpected("a value", at: pos, note: " (trailing commas are not allowed)")
            default:
                throw unexpectedValue(at: pos)
            }

            // A value is complete: close as many containers as end here.
            while let isObject = state.containers.last {
                skipWhitespace()
                let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if pos < end, base[pos] == UInt8(ascii: ",") {
                    pos += 1
                    skipWhitespace()
                    if isObject { try skipMemberKey(afterComma: true, &state) }
                    afterComma = true
                    continue valueLoop
                }
                guard pos < end, base[pos] == close else {
                    throw unexpected(isObject ? "',' or '}' after object member" : "',' or ']' after array element", at: pos)
                }
                pos += 1
                state.containers.removeLast()
                if isObject { state.endObject() }
            }
            return
        }
    }

    /// Checks `"key"` and the `:` after it as `parseMemberKey` parses them, leaving `pos` at the member's value.
    private mutating func skipMemberKey(afterComma: Bool, _ state: inout JSONSkipState) throws(JSONParseError) {
        try expectMemberKey(afterComma: afterComma)
        let keyOffset = pos
        if try skipString() {
            let key = keyOffset + 1..<pos - 1
            guard state.insertPlainKey(key, of: base) else {
                throw duplicateKey(String(decoding: UnsafeBufferPointer(start: base + key.lowerBound, count: key.count), as: UTF8.self), at: keyOffset)
            }
        } else {
            pos = keyOffset
            let key = try parseString()  // checked already: this decodes it
            guard state.insertKey(key, of: base) else { throw duplicateKey(key, at: keyOffset) }
        }
        try parseColon()
    }

    /// Checks `true`, `false` or `null` as `parseLiteral` parses them.
    private mutating func skipLiteral() throws(JSONParseError) {
        if matches("true") || matches("null") {
            pos += 4
        } else if matches("false") {
            pos += 5
        } else {
            throw unexpectedValue(at: pos)
        }
    }
}
