import Prefs

/// Transactions that move value between keys which always sum to zero, each body checking that they do: a body that
/// reads a sum other than zero saw a state that never existed (a torn read). Run by several processes on one store
/// (prefs-test-child `transfer`, prefs-torture's snapshot part), it counts every body run, reruns included.
package enum TransferWorkload {
    /// What one process did and saw.
    package struct Tally: Sendable, Equatable {
        /// Bodies run, reruns included.
        package var bodies = 0
        /// Bodies that read keys not summing to zero.
        package var torn = 0
        /// Transactions committed.
        package var committed = 0
        /// The values the first torn body read, in key order.
        package var firstTorn: [Int]?

        package init() {}

        /// One line: `bodies B torn T committed C [first v0,v1,…]`.
        package var line: String {
            "bodies \(bodies) torn \(torn) committed \(committed)" + (firstTorn.map { " first " + $0.map(String.init).joined(separator: ",") } ?? "")
        }

        /// Reads ``line``; nil for another line.
        package init?(line: String) {
            let words = line.split(separator: " ")
            guard words.count >= 6, words[0] == "bodies", words[2] == "torn", words[4] == "committed",
                let bodies = Int(words[1]), let torn = Int(words[3]), let committed = Int(words[5])
            else { return nil }
            self.bodies = bodies
            self.torn = torn
            self.committed = committed
            if words.count == 8, words[6] == "first" { firstTorn = words[7].split(separator: ",").compactMap { Int($0) } }
        }

        package static func + (left: Tally, right: Tally) -> Tally {
            var sum = left
            sum.bodies += right.bodies
            sum.torn += right.torn
            sum.committed += right.committed
            sum.firstTorn = left.firstTorn ?? right.firstTorn
            return sum
        }
    }

    /// The keys: `PREFIX-0` … `PREFIX-(count - 1)`, all 0 until written.
    package static func keys(prefix: String, count: Int) -> [Prefs.Key<Int>] {
        (0..<count).map { Prefs.Key<Int>("\(prefix)-\($0)", initial: 0) }
    }

    /// `transactions` transactions, each reading every key one by one (through the transaction), checking the sum,
    /// then moving 1…100 from one key to another, both chosen by `random`.
    package static func run(
        _ prefs: Prefs, keys: [Prefs.Key<Int>], transactions: Int, random: inout SeededGenerator
    ) throws -> Tally {
        precondition(keys.count >= 2)
        var tally = Tally()
        for _ in 0..<transactions {
            let from = Int.random(in: 0..<keys.count, using: &random)
            var to = Int.random(in: 0..<keys.count - 1, using: &random)
            if to >= from { to += 1 }
            let amount = Int.random(in: 1...100, using: &random)
            try prefs.transaction { transaction in
                tally.bodies += 1
                var read: [Int] = []
                for key in keys { read.append(transaction[key]) }
                if read.reduce(0, +) != 0 {
                    tally.torn += 1
                    if tally.firstTorn == nil { tally.firstTorn = read }
                }
                transaction[keys[from]] = read[from] - amount
                transaction[keys[to]] = read[to] + amount
            }
            tally.committed += 1
        }
        return tally
    }
}
