import Foundation
import Prefs
import PrefsPostgreSQL
import PrefsSupport
import PrefsTestHarness
import PrefsTesting
import Testing

/// A transaction body's reads come from one snapshot of the namespace: keys kept summing to zero by every writer never
/// read otherwise inside a body, whatever other instances commit while it runs.
@Suite("PostgreSQL transaction snapshots")
struct PostgreSQLSnapshotTests {
    @Test("child processes moving value between keys: no body ever reads keys that do not sum to zero")
    func transfersAcrossProcesses() async throws {
        let fixture = try PostgreSQLFixture()
        let children = 6, perChild = 200, keys = 4
        let results = try await withThrowingTaskGroup(of: ChildProcess.Result.self) { group in
            for child in 0..<children {
                group.addTask {
                    try await ChildProcess.run(
                        "prefs-test-child",
                        ["transfer", "postgresql:\(fixture.namespace)", fixture.url, "t", "\(keys)", "\(perChild)", "\(child + 1)"],
                        timeout: .seconds(300))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var total = TransferWorkload.Tally()
        for result in results {
            #expect(result.status == 0, "\(result.stderr)")
            let tally = try #require(TransferWorkload.Tally(line: result.stdout.trimmingCharacters(in: .newlines)), "\(result.stdout)")
            #expect(tally.committed == perChild)
            total = total + tally
        }
        #expect(total.torn == 0, "\(total.torn) of \(total.bodies) bodies read a state that never existed, first \(total.firstTorn ?? [])")
        // Contention happened (bodies ran again after conflicts): else this test would prove nothing.
        #expect(total.bodies > total.committed, "\(total.line)")
        let reader = try fixture.reopen()
        let final = TransferWorkload.keys(prefix: "t", count: keys).map { reader[$0] }
        #expect(final.reduce(0, +) == 0, "\(final)")
    }

    @Test("a body's later reads come from the snapshot of its first, even when the store checks for changes on every read")
    func laterReadsKeepTheFirstSnapshot() throws {
        // A staleness bound of zero: every read outside a body checks the server, the strictest freshness there is.
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(stalenessBound: .zero))
        let other = try fixture.reopen()
        let (a, b) = (Prefs.Key<Int>("a", initial: 0), Prefs.Key<Int>("b", initial: 0))
        var runs = 0
        let seen = try fixture.prefs.transaction { transaction in
            runs += 1
            let first = transaction[a]
            // Another instance moves 5 from a to b between this body's two reads (once).
            if runs == 1 {
                try other.transaction { moving in
                    moving[a] -= 5
                    moving[b] += 5
                }
            }
            return (first, transaction[b])
        }
        #expect(seen.0 + seen.1 == 0, "the body read a = \(seen.0), b = \(seen.1)")
        #expect(runs == 1, "a body that writes nothing commits what it read")
    }

    @Test("a body that read a moved key runs again at a newer snapshot, and commits what it read there")
    func conflictRerunsAtNewerSnapshot() throws {
        let fixture = try PostgreSQLFixture(options: PostgreSQLOptions(stalenessBound: .zero))
        let other = try fixture.reopen()
        let (a, b) = (Prefs.Key<Int>("a", initial: 0), Prefs.Key<Int>("b", initial: 0))
        var reads: [[Int]] = []
        try fixture.prefs.transaction { transaction in
            let first = transaction[a]
            if reads.isEmpty {
                try other.transaction { moving in
                    moving[a] -= 5
                    moving[b] += 5
                }
            }
            let second = transaction[b]
            reads.append([first, second])
            transaction[a] = first - 1
            transaction[b] = second + 1
        }
        #expect(reads == [[0, 0], [-5, 5]])
        let reader = try fixture.reopen()
        let final: [Int] = [reader[a], reader[b]]
        #expect(final == [-6, 6])
    }

    @Test("a body reading a key this store wrote since its snapshot reads the write when nothing it read has moved")
    func ownWriteReadAfterOtherKey() throws {
        let fixture = try PostgreSQLFixture()
        let (a, b, c) = (Prefs.Key<Int>("a", initial: 0), Prefs.Key<Int>("b", initial: 0), Prefs.Key<Int>("c", initial: 0))
        #expect(fixture.prefs[c] == 0)  // the namespace as of a first check
        try fixture.prefs.transaction { transaction in
            transaction[a] -= 3
            transaction[b] += 3
        }
        var runs = 0
        let seen = try fixture.prefs.transaction { transaction in
            runs += 1
            let values = [transaction[c], transaction[a], transaction[b]]
            transaction[c] = values[0] + 1
            transaction[a] = values[1] - 1
            return values
        }
        #expect(seen == [0, -3, 3])
        #expect(runs == 1, "the body moved to a snapshot holding this store's own write, instead of reading the older one and running again")
    }

    @Test("a body that read a key another instance then moved stays at its snapshot for later reads of keys this store wrote")
    func staysAtSnapshotWhenAReadMoved() throws {
        let fixture = try PostgreSQLFixture()
        let other = try fixture.reopen()
        let (a, b, c) = (Prefs.Key<Int>("a", initial: 0), Prefs.Key<Int>("b", initial: 0), Prefs.Key<Int>("c", initial: 0))
        #expect(fixture.prefs[c] == 0)
        try fixture.prefs.transaction { transaction in
            transaction[a] -= 3
            transaction[b] += 3
        }
        var reads: [[Int]] = []
        try fixture.prefs.transaction { transaction in
            let first = transaction[c]
            if reads.isEmpty {
                // Another instance moves 10 from c to a: the body's snapshot cannot move past that (c moved), so its
                // later reads come from the snapshot it has, where a and b are as they were before this store's write.
                try other.transaction { moving in
                    moving[c] -= 10
                    moving[a] += 10
                }
            }
            let values = [first, transaction[a], transaction[b]]
            reads.append(values)
            transaction[c] = first + 1
            transaction[b] = values[2] - 1
        }
        for values in reads { #expect(values.reduce(0, +) == 0, "a body read \(values)") }
        #expect(reads.count == 2)
        #expect(reads.last == [-10, 7, 3])
        let reader = try fixture.reopen()
        let final: [Int] = [reader[a], reader[b], reader[c]]
        #expect(final == [7, 2, -9])
    }
}
