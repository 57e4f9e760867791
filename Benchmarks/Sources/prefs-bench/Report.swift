import Foundation

// Output: a table per workload on stdout, the same results as JSON, and an SVG chart of the ratios.

enum Report {
    static let headers = ["contender", "metric", "median", "spread (min – max)", "IQR", "ops/s", "vs", "ratio", "target"]
    static let rightAligned: Set<Int> = [2, 3, 4, 5, 7]

    static func printTable(title: String, rows: [Measurement]) {
        guard !rows.isEmpty else { return }
        var lines: [[String]] = []
        for row in rows {
            let scale = row.display == .total ? Double(row.opsPerSample) : 1
            let stats = row.nanosecondsPerOperation
            let metric = row.display == .total && row.opsPerSample > 1 ? "\(row.metric) (\(Format.count(row.opsPerSample)))" : row.metric
            var cells = [
                row.contender, metric, Format.time(stats.median * scale),
                "\(Format.time(stats.min * scale)) – \(Format.time(stats.max * scale))",
                Format.time((stats.q3 - stats.q1) * scale), Format.rate(row.operationsPerSecond),
            ]
            if row.comparisons.isEmpty {
                lines.append(cells + ["", "", ""])
            }
            for (index, comparison) in row.comparisons.enumerated() {
                if index > 0 { cells = ["", "", "", "", "", ""] }
                lines.append(cells + [comparison.baseline, Format.ratio(comparison.ratio), targetText(comparison)])
            }
        }
        print("\n\(title)")
        print(render([headers] + lines, rightAligned: rightAligned))
        for row in rows {
            if let note = row.note { print("  note: \(row.contender): \(note)") }
        }
        fflush(nil)  // each table appears when its workload ends, also when stdout is a file
    }

    static func targetText(_ comparison: Comparison) -> String {
        guard let target = comparison.target, let met = comparison.met else { return "" }
        return "\(target.text) \(met ? "met" : "MISSED")"
    }

    /// Pads columns to their widest cell (right-aligned for numbers), with a rule under the header.
    static func render(_ rows: [[String]], rightAligned: Set<Int>) -> String {
        let count = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        func line(_ row: [String]) -> String {
            let cells = row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return rightAligned.contains(index) ? padding + cell : cell + padding
            }
            return "  " + cells.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        let rule = "  " + widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")
        return ([line(rows[0]), rule] + rows.dropFirst().map(line)).joined(separator: "\n")
    }

    /// Every target comparison of the run, one line each.
    static func printTargets(_ measurements: [Measurement]) {
        var rows: [[String]] = [["workload", "N", "type", "subject", "vs", "ratio", "target"]]
        for row in measurements {
            for comparison in row.comparisons where comparison.target != nil {
                rows.append([
                    "\(row.workload)", Format.count(row.n), row.valueType, row.id, comparison.baseline,
                    Format.ratio(comparison.ratio), targetText(comparison),
                ])
            }
        }
        guard rows.count > 1 else { return }
        print("\nTargets (reported, never asserted)")
        print(render(rows, rightAligned: [1, 5]))
        let missed = measurements.flatMap(\.comparisons).filter { $0.met == false }.count
        let met = measurements.flatMap(\.comparisons).filter { $0.met == true }.count
        print("  \(met) met, \(missed) missed")
    }

    static func printMemory(_ memory: [PeakMemory]) {
        guard let none = memory.first(where: { $0.contender == "empty" }) else { return }
        var rows: [[String]] = [["contender", "N", "peak RSS (VmHWM)", "over keys+values", "over empty process", "heap kept per key"]]
        for entry in memory {
            rows.append([
                entry.contender, Format.count(entry.n), mib(entry.peakKiB), mib(entry.peakKiB - entry.baseKiB), mib(entry.peakKiB - none.peakKiB),
                entry.heapBytes.map { "\(Int((Double($0) / Double(entry.n)).rounded())) B" } ?? "",
            ])
        }
        print("\nPeak memory, one child process per contender (Int values; fill the store, read every key)")
        print(render(rows, rightAligned: [1, 2, 3, 4, 5]))
    }

    static func mib(_ kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }

    // MARK: - Files

    struct Document: Codable {
        var tool = "prefs-bench"
        var date: String
        var quick: Bool
        var sizes: [Int]
        var host: [String: String]
        var measurements: [Measurement]
        var peakMemory: [PeakMemory]
        var notes: [String]
    }

    static func writeJSON(_ document: Document, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try createParent(of: path)
        try encoder.encode(document).write(to: URL(fileURLWithPath: path))
    }

    static func createParent(of path: String) throws {
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty { try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) }
    }

    /// A bar per target comparison: the ratio on a log scale, the target as a tick, green when met.
    static func writeSVG(_ measurements: [Measurement], to path: String) throws {
        var bars: [(label: String, ratio: Double, target: Double, met: Bool)] = []
        for row in measurements {
            for comparison in row.comparisons {
                guard let target = comparison.target, let met = comparison.met else { continue }
                bars.append(
                    (
                        "\(row.workload) · \(Format.count(row.n)) \(row.valueType) · \(row.id) vs \(comparison.baseline)",
                        comparison.ratio, target.maxRatio, met
                    ))
            }
        }
        let labelWidth = 560.0, plotWidth = 420.0, rowHeight = 18.0, top = 40.0
        let (low, high) = (-3.0, 2.0)  // log10 of 0.001× … 100×
        func x(_ ratio: Double) -> Double {
            labelWidth + (min(max(log10(max(ratio, 1e-9)), low), high) - low) / (high - low) * plotWidth
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(labelWidth + plotWidth + 80))" height="\(Int(top + rowHeight * Double(bars.count) + 30))" font-family="monospace" font-size="11">
            <text x="10" y="20" font-size="14">prefs-bench: time ratio to baseline (log scale; left of the tick = target met)</text>\n
            """
        for exponent in Int(low)...Int(high) {
            let position = x(pow(10, Double(exponent)))
            svg += "<line x1=\"\(position)\" y1=\"\(top - 8)\" x2=\"\(position)\" y2=\"\(top + rowHeight * Double(bars.count))\" stroke=\"#ddd\"/>"
            svg += "<text x=\"\(position)\" y=\"\(top - 10)\" text-anchor=\"middle\">\(Format.ratio(pow(10, Double(exponent))))</text>\n"
        }
        for (index, bar) in bars.enumerated() {
            let y = top + rowHeight * Double(index)
            let label = bar.label.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            svg += "<text x=\"\(labelWidth - 6)\" y=\"\(y + 12)\" text-anchor=\"end\">\(label)</text>"
            svg +=
                "<rect x=\"\(labelWidth)\" y=\"\(y + 3)\" width=\"\(max(x(bar.ratio) - labelWidth, 1))\" height=\"\(rowHeight - 6)\" fill=\"\(bar.met ? "#4a4" : "#d44")\"/>"
            svg += "<line x1=\"\(x(bar.target))\" y1=\"\(y + 1)\" x2=\"\(x(bar.target))\" y2=\"\(y + rowHeight - 1)\" stroke=\"#000\" stroke-width=\"2\"/>"
            svg += "<text x=\"\(labelWidth + plotWidth + 6)\" y=\"\(y + 12)\">\(Format.ratio(bar.ratio))</text>\n"
        }
        svg += "</svg>\n"
        try createParent(of: path)
        try svg.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
