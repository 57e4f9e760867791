import Foundation

// `--summary RESULTS.json`: a committed run as the Markdown tables Benchmarks.md shows, so the page is checked against
// the run (.ci/bench-summary) instead of copied from it by hand.

extension Report {
    /// Peak-memory targets: Prefs above an empty process against a baseline above one, at 100k keys.
    static let memoryTargets: [(subject: String, baseline: String, maxRatio: Double)] = [
        ("Prefs memory", Name.dictionary, 3),
        (Name.memoryOneByOne, Name.dictionaryOneByOne, 3),
        ("Prefs sqlite", Name.rawSQLite, 3),
        ("Prefs json", "JSONEncoder/JSONDecoder", 1),
    ]

    static func markdownSummary(of path: String) throws -> String {
        let document = try JSONDecoder().decode(Document.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        let baselines = precedingBaselines(document.measurements)
        var lines = [
            "Run of \(document.date.prefix(10)), \(document.host["build"] ?? "?") build, \(document.host["cores"] ?? "?") cores, SQLite \(document.host["sqlite"] ?? "?"), N = \(document.sizes.map(Format.count).joined(separator: ", ")).",
            "",
            "| workload | N | type | Prefs | median | baseline | median | ratio | target |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        var met = 0, missed = 0
        for (index, row) in document.measurements.enumerated() {
            for comparison in row.comparisons {
                guard let target = comparison.target, let isMet = comparison.met else { continue }
                if isMet { met += 1 } else { missed += 1 }
                let baseline = baselines[index][comparison.baseline]
                lines.append(
                    "| \(row.workload) | \(Format.count(row.n)) | \(row.valueType) | \(row.id) | \(Format.time(row.shownMedian)) | \(comparison.baseline) | "
                        + "\(baseline.map { Format.time($0.shownMedian) } ?? "") | \(Format.ratio(comparison.ratio)) | \(target.text) \(isMet ? "met" : "**missed**") |"
                )
            }
        }
        // O(1): the JSON store's durable set at the largest N against its cost at the smallest.
        let jsonSets = document.measurements.filter { $0.workload == 2 && $0.contender == "Prefs json" && $0.metric == "set" }
        if let small = document.sizes.min(), let large = document.sizes.max(), large > small {
            for type in ["Int", "String"] {
                guard let first = jsonSets.first(where: { $0.n == small && $0.valueType == type }),
                    let last = jsonSets.first(where: { $0.n == large && $0.valueType == type })
                else { continue }
                let ratio = last.shownMedian / first.shownMedian
                if ratio <= 2.5 { met += 1 } else { missed += 1 }
                lines.append(
                    "| 2 | \(Format.count(large)) | \(type) | Prefs json · set | \(Format.time(last.shownMedian)) | Prefs json · set at \(Format.count(small)) | "
                        + "\(Format.time(first.shownMedian)) | \(Format.ratio(ratio)) | ≤2.50× \(ratio <= 2.5 ? "met" : "**missed**") |")
            }
        }
        lines += ["", "\(met) targets met, \(missed) missed."]
        lines += lmdbTable(document)
        lines += workloadTable(document, workload: 9, title: "PostgreSQL (workload 9), every comparison of the run:")
        let memory = document.peakMemory
        let sizes = Set(memory.map(\.n)).sorted()
        if !sizes.isEmpty {
            lines += [
                "", "Peak memory above an empty process (one child process each; fill N Int keys, read every key):", "",
                "| N | Prefs | above empty | baseline | above empty | ratio | target |", "|---|---|---|---|---|---|---|",
            ]
            for n in sizes {
                let entries = memory.filter { $0.n == n }
                guard let empty = entries.first(where: { $0.contender == "empty" }) else { continue }
                func above(_ name: String) -> Int? { entries.first { $0.contender == name }.map { $0.peakKiB - empty.peakKiB } }
                for target in memoryTargets where n == 100_000 {
                    guard let subject = above(target.subject), let baseline = above(target.baseline) else { continue }
                    let ratio = Double(max(subject, 1)) / Double(max(baseline, 1))
                    let verdict = "≤\(Format.ratio(target.maxRatio)) \(ratio <= target.maxRatio ? "met" : "**missed**")"
                    lines.append(
                        "| \(Format.count(n)) | \(target.subject) | \(mib(subject)) | \(target.baseline) | \(mib(baseline)) | \(Format.ratio(ratio)) | \(verdict) |"
                    )
                }
            }
            // Bytes per key: the heap each contender keeps (malloc's count, before the store closes), per key.
            let measured = memory.filter { $0.heapBytes != nil }
            let contenders = measured.reduce(into: [String]()) { if !$0.contains($1.contender), $1.contender != "empty" { $0.append($1.contender) } }
            let heapSizes = Set(measured.map(\.n)).sorted()
            if !contenders.isEmpty {
                lines += [
                    "", "Heap kept per key (bytes; fill N Int keys, read every key, then malloc's count of what is still held):", "",
                    "| contender | " + heapSizes.map { "N = \(Format.count($0))" }.joined(separator: " | ") + " |",
                    "|---|" + String(repeating: "---|", count: heapSizes.count),
                ]
                for name in contenders {
                    let cells = heapSizes.map { n in
                        measured.first { $0.contender == name && $0.n == n }?.heapBytes.map { "\(Int((Double($0) / Double(n)).rounded()))" } ?? ""
                    }
                    lines.append("| \(name) | " + cells.joined(separator: " | ") + " |")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Prefs ÷ LMDB for every comparison with an LMDB contender: a row per Prefs contender and metric, a column per N
    /// and value type.
    static func lmdbTable(_ document: Document) -> [String] {
        var columns: [(n: Int, type: String)] = []
        var rows: [String] = []
        var cells: [String: String] = [:]
        for row in document.measurements {
            for comparison in row.comparisons where comparison.baseline.hasPrefix("LMDB") {
                let label = "\(row.workload) · \(row.id)"
                if !rows.contains(label) { rows.append(label) }
                if !columns.contains(where: { $0 == (row.n, row.valueType) }) { columns.append((row.n, row.valueType)) }
                cells["\(label) \(row.n) \(row.valueType)"] = Format.ratio(comparison.ratio)
            }
        }
        guard !rows.isEmpty else { return [] }
        columns.sort { ($0.n, $0.type) < ($1.n, $1.type) }
        var lines = [
            "", "Prefs ÷ LMDB, same run (above 1: Prefs is slower):", "",
            "| workload · Prefs · metric | " + columns.map { "\(Format.count($0.n)) \($0.type)" }.joined(separator: " | ") + " |",
            "|---|" + String(repeating: "---|", count: columns.count),
        ]
        for label in rows {
            lines.append("| \(label) | " + columns.map { cells["\(label) \($0.n) \($0.type)"] ?? "" }.joined(separator: " | ") + " |")
        }
        return lines
    }

    /// Every comparison of one workload, with both medians and the note when there is one.
    static func workloadTable(_ document: Document, workload: Int, title: String) -> [String] {
        let baselines = precedingBaselines(document.measurements)
        var lines = ["", title, "", "| N | Prefs | median | baseline | median | ratio |", "|---|---|---|---|---|---|"]
        for (index, row) in document.measurements.enumerated() where row.workload == workload && row.role == .subject {
            for comparison in row.comparisons {
                let baseline = baselines[index][comparison.baseline]
                lines.append(
                    "| \(Format.count(row.n)) | \(row.id) | \(Format.time(row.shownMedian)) | \(comparison.baseline) | "
                        + "\(baseline.map { Format.time($0.shownMedian) } ?? "") | \(Format.ratio(comparison.ratio)) |")
            }
        }
        return lines.count > 5 ? lines : []
    }

    /// For each measurement, the measurements of its own table it can be compared with, by id: the latest earlier (or
    /// the same) measurement of that workload, N and value type. Two tables of one workload may reuse a contender's
    /// name and metric (the fleet rows of workload 9), so the nearest one is the one of its table.
    static func precedingBaselines(_ measurements: [Measurement]) -> [[String: Measurement]] {
        var seen: [String: Measurement] = [:]
        var result: [[String: Measurement]] = []
        var table = ""
        for row in measurements {
            let key = "\(row.workload) \(row.n) \(row.valueType)"
            if key != table {
                seen = [:]
                table = key
            }
            seen[row.id] = row
            result.append(seen)
        }
        return result
    }
}
