import Prefs

/// An operation `prefs-test-child repeat` runs until it is killed, and what a store must hold after the kill,
/// given the last operation acknowledged ("ack i" printed after it returned).
enum CrashOperation: String, CaseIterable, CustomStringConvertible, Sendable {
    case set, batch, transaction, update

    var description: String { rawValue }

    /// Every way `values` breaks the promise for the round written under `prefix`, whose last acknowledged operation
    /// was `acknowledged` (-1: none). Acknowledged operations are all there; the one in flight at the kill is there
    /// whole or not at all; nothing after it.
    func problems(in values: [String: StoredValue], prefix: String, acknowledged: Int) -> [String] {
        var problems: [String] = []
        func int(_ name: String) -> Int? {
            if case .int(let value)? = values[name]?.json { return Int(value) }
            return nil
        }
        /// Operation `index` wrote `names`, each = index: all there when acknowledged, all or none when in flight.
        func check(_ index: Int, _ names: [String], inFlight: Bool) {
            let present = names.filter { int($0) == index }
            if inFlight {
                if !present.isEmpty, present.count != names.count {
                    problems.append("\(prefix): operation \(index) half applied (\(present.count) of \(names.count) values)")
                }
            } else if present.count != names.count {
                problems.append("\(prefix): acknowledged operation \(index) lost (\(present.count) of \(names.count) values)")
            }
        }
        let parts = (0..<16).map { "-\($0)" }
        switch self {
        case .set:
            for index in 0...(acknowledged + 1) { check(index, ["\(prefix)-\(index)"], inFlight: index > acknowledged) }
            if values["\(prefix)-\(acknowledged + 2)"] != nil { problems.append("\(prefix): a value never written") }
        case .batch:
            for index in 0...(acknowledged + 1) {
                check(index, parts.map { "\(prefix)-\(index)\($0)" }, inFlight: index > acknowledged)
            }
            if values["\(prefix)-\(acknowledged + 2)-0"] != nil { problems.append("\(prefix): a batch never written") }
        case .transaction:
            let next = int("\(prefix)-next") ?? 0
            if next != acknowledged + 1, next != acknowledged + 2 {
                problems.append("\(prefix)-next is \(next) after \(acknowledged + 1) acknowledged transactions")
            }
            // The counter and the values are one transaction: the values of every counted transaction are there.
            for index in 0..<max(next, acknowledged + 1) { check(index, parts.map { "\(prefix)-\(index)\($0)" }, inFlight: false) }
            if values["\(prefix)-\(next)-0"] != nil { problems.append("\(prefix): values of an uncounted transaction") }
        case .update:
            let count = int("\(prefix)-count") ?? 0
            if count != acknowledged + 1, count != acknowledged + 2 {
                problems.append("\(prefix)-count is \(count) after \(acknowledged + 1) acknowledged increments")
            }
        }
        return problems
    }
}

import Testing

/// The crash tests' model can fail: each broken promise is reported.
@Suite("Crash model")
struct CrashOperationTests {
    static func int(_ value: Int) -> StoredValue { StoredValue(type: .int, json: .int(value)) }

    static func batch(_ index: Int, parts: Range<Int> = 0..<16, prefix: String = "r") -> [String: StoredValue] {
        Dictionary(uniqueKeysWithValues: parts.map { ("\(prefix)-\(index)-\($0)", int(index)) })
    }

    @Test("whole acknowledged batches and a whole or absent one in flight pass; a half batch or a lost one fails")
    func batches() {
        let two = Self.batch(0).merging(Self.batch(1)) { a, _ in a }
        #expect(CrashOperation.batch.problems(in: two, prefix: "r", acknowledged: 1) == [])
        #expect(CrashOperation.batch.problems(in: two, prefix: "r", acknowledged: 0) == [], "the one in flight landed whole")
        #expect(
            CrashOperation.batch.problems(in: Self.batch(0), prefix: "r", acknowledged: 1)
                == ["r: acknowledged operation 1 lost (0 of 16 values)"])
        let half = Self.batch(0).merging(Self.batch(1, parts: 0..<8)) { a, _ in a }
        #expect(CrashOperation.batch.problems(in: half, prefix: "r", acknowledged: 0) == ["r: operation 1 half applied (8 of 16 values)"])
    }

    @Test("sets, transactions and updates: a lost acknowledged write or a wrong counter fails")
    func others() {
        let sets = ["r-0": Self.int(0), "r-2": Self.int(2)]
        #expect(CrashOperation.set.problems(in: sets, prefix: "r", acknowledged: 2) == ["r: acknowledged operation 1 lost (0 of 1 values)"])
        #expect(CrashOperation.update.problems(in: ["r-count": Self.int(3)], prefix: "r", acknowledged: 2) == [])
        #expect(
            CrashOperation.update.problems(in: ["r-count": Self.int(2)], prefix: "r", acknowledged: 2)
                == ["r-count is 2 after 3 acknowledged increments"])
        var transactions = Self.batch(0).merging(["r-next": Self.int(2)]) { a, _ in a }
        #expect(
            CrashOperation.transaction.problems(in: transactions, prefix: "r", acknowledged: 1)
                == ["r: acknowledged operation 1 lost (0 of 16 values)"], "counted, but its values are missing")
        transactions.merge(Self.batch(1)) { a, _ in a }
        #expect(CrashOperation.transaction.problems(in: transactions, prefix: "r", acknowledged: 1) == [])
    }
}
