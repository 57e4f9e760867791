import Foundation
import Prefs
import PrefsTestHarness
import PrefsTesting
import Testing
import PrefsJSON

@Suite("ISO 8601")
struct ISO8601Tests {
    private func date(_ interval: Double) -> Date { Date(timeIntervalSinceReferenceDate: interval) }

    // MARK: - Formatting

    @Test func formatsKnownInstants() {
        #expect(ISO8601.format(date(0)) == "2001-01-01T00:00:00Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ISO8601.format(date(817_672_401)) == "2026-11-29T19:13:21Z")
        #expect(ISO8601.format(date(817_672_401.5)) == "2026-11-29T19:13:21.5Z")
        #expect(ISO8601.format(date(0.1)) == "2001-01-01T00:00:00.1Z")
        #expect(ISO8601.format(date(1e-5)) == "2001-01-01T00:00:00.00001Z")
        #expect(ISO8601.format(date(730_857_600)) == "2024-02-29T00:00:00Z")
        #expect(ISO8601.format(date(-0.5)) == "2000-12-31T23:59:59.5Z")
        #expect(ISO8601.format(date(-1e-9)) == "2000-12-31T23:59:59.999999999Z")
        #expect(ISO8601.format(date(-1.25)) == "2000-12-31T23:59:58.75Z")
        // Foundation's distantPast is 0001-01-01 in the Julian calendar, i.e. 0000-12-30 proleptic Gregorian.
        #expect(ISO8601.format(Date.distantPast) == "0000-12-30T00:00:00Z")
        #expect(ISO8601.format(Date.distantFuture) == "4001-01-01T00:00:00Z")
    }

    @Test func yearsOutside0000To9999UseTheExpandedForm() throws {
        let cases: [(Double, String)] = [
            (252_423_993_600, "+010000-01-01T00:00:00Z"),
            (252_423_993_599, "9999-12-31T23:59:59Z"),
            (-63_145_526_400, "0000-01-01T00:00:00Z"),
            (-63_145_612_800, "-000001-12-31T00:00:00Z"),
        ]
        for (interval, text) in cases {
            #expect(ISO8601.format(date(interval)) == text)
            #expect(try ISO8601.parse(text) == date(interval))
        }
        let far = date(-0x1p61)
        #expect(try ISO8601.parse(ISO8601.format(far)) == far)
    }

    @Test func formatsFixedFractionDigitsByTruncating() {
        #expect(ISO8601.format(date(1.5), fractionDigits: 3) == "2001-01-01T00:00:01.500Z")
        #expect(ISO8601.format(date(1.9999), fractionDigits: 0) == "2001-01-01T00:00:01Z")
        #expect(ISO8601.format(date(1.9999), fractionDigits: 2) == "2001-01-01T00:00:01.99Z")
        #expect(ISO8601.format(date(0.123456789123), fractionDigits: 9) == "2001-01-01T00:00:00.123456789Z")
        #expect(ISO8601.format(date(0.123456789123), fractionDigits: 12) == "2001-01-01T00:00:00.123456789Z")
        #expect(ISO8601.format(date(7), fractionDigits: -1) == "2001-01-01T00:00:07Z")
        #expect(ISO8601.format(date(-0.25), fractionDigits: 3) == "2000-12-31T23:59:59.750Z")
    }

    @Test func datesOutsideTheSupportedRangeFormatAsMarkers() {
        #expect(ISO8601.format(date(1e300)) == "+Infinity")
        #expect(ISO8601.format(date(-0x1p62)) == "-Infinity")
        #expect(ISO8601.format(date(.nan)) == "NaN")
        #expect(ISO8601.format(date(.infinity), fractionDigits: 3) == "+Infinity")
        #expect(throws: ISO8601.ParseError.self) { try ISO8601.parse("+Infinity") }
    }

    // MARK: - Exact round trips

    private func expectRoundTrip(_ interval: Double) {
        let text = ISO8601.format(date(interval))
        do {
            let parsed = try ISO8601.parse(text).timeIntervalSinceReferenceDate
            let expected = interval == 0 ? 0 : interval  // -0.0 comes back as 0.0
            #expect(parsed.bitPattern == expected.bitPattern, "\(interval) -> \(text) -> \(parsed)")
        } catch {
            Issue.record("\(interval) -> \(text): \(error)")
        }
    }

    @Test func specialInstantsRoundTripBitForBit() {
        let intervals: [Double] = [
            0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, -.leastNormalMagnitude,
            1e-300, -1e-300, 0.1, -0.1, 0.5, -0.5, 1 - 0x1p-53, -(1 - 0x1p-53), 1 + 0x1p-52, -1 - 0x1p-52, -1, 1,
            Date.distantPast.timeIntervalSinceReferenceDate, Date.distantFuture.timeIntervalSinceReferenceDate,
            817_672_401.123456789, -978_307_200.000001, 0x1p53 - 1, 0x1p53 + 2, 0x1p62 - 1024, -(0x1p62 - 1024),
            Double(bitPattern: 0x3FEF_FFFF_FFFF_FFFF), Double(bitPattern: 0xBFDF_FFFF_FFFF_FFFF),
        ]
        intervals.forEach(expectRoundTrip)
    }

    @Test func randomInstantsRoundTripBitForBit() {
        var rng = SeededGenerator(seed: 2026)
        for round in 0..<100_000 {
            let interval: Double
            switch round % 5 {
            case 0:
                let bits = Double(bitPattern: rng.next())
                interval = bits.isFinite && abs(bits) < 0x1p62 ? bits : Double(bitPattern: rng.next() >> 2)
            case 1:
                interval = Double.random(in: -1e11...1e11, using: &rng)
            case 2:
                interval =
                    Double(Int64.random(in: -100_000_000_000...100_000_000_000, using: &rng))
                    + Double(Int.random(in: 0..<1_000_000_000, using: &rng)) / 1e9
            case 3:
                interval = Double.random(in: -1...1, using: &rng) * Double(sign: .plus, exponentBitPattern: UInt(rng.next() % 1100), significandBitPattern: 0)
            default:
                interval = Double.random(in: -2e9...2e9, using: &rng).rounded(.toNearestOrEven) + Double.random(in: -1...1, using: &rng)
            }
            guard interval.isFinite, abs(interval) < 0x1p62 else { continue }
            expectRoundTrip(interval)
        }
    }

    // MARK: - Parsing

    @Test func parsesEveryAcceptedSpelling() throws {
        let instant = date(817_672_401)
        for text in [
            "2026-11-29T19:13:21Z", "2026-11-29t19:13:21z", "2026-11-29 19:13:21Z", "2026-11-29T20:13:21+01:00",
            "2026-11-29T13:43:21-0530", "2026-11-29T19:13:21.000Z", "2026-11-29T19:13:21-00:00", "2026-11-30T00:13:21+05:00",
        ] {
            #expect(try ISO8601.parse(text) == instant, "\(text)")
        }
        #expect(try ISO8601.parse("2026-11-29T19:13:21.5Z"[...]) == date(817_672_401.5))
        #expect(try ISO8601.parse("2026-11-29", allowDateOnly: true) == date(817_603_200))
        #expect(try ISO8601.parse("2024-02-29T00:00:00Z") == date(730_857_600))
        #expect(try ISO8601.parse("2001-01-01T00:00:00.1000000000000000055511151231257827Z") == date(0.1))
        #expect(try ISO8601.parse("2000-12-31T23:59:59.9999999999999999999999Z") == date(-1e-22))
    }

    static let failures: [(String, ISO8601.ParseError)] = [
        ("2026-11-29T19:13:21", .missingTimeZone),
        ("2026-11-29T19:13:21.25", .missingTimeZone),
        ("2026-11-29", .invalid(reason: "expected 'T' and a time after the date, found end of text")),
        ("2026-13-01T00:00:00Z", .invalid(reason: "month 13 is out of range")),
        ("2026-00-01T00:00:00Z", .invalid(reason: "month 0 is out of range")),
        ("2023-02-29T00:00:00Z", .invalid(reason: "day 29 is out of range for 2023-02")),
        ("2026-04-31T00:00:00Z", .invalid(reason: "day 31 is out of range for 2026-04")),
        ("2026-11-29T24:00:00Z", .invalid(reason: "hour 24 is out of range")),
        ("2026-11-29T19:60:00Z", .invalid(reason: "minute 60 is out of range")),
        ("2016-12-31T23:59:60Z", .invalid(reason: "second 60 is out of range (leap seconds are not supported)")),
        ("2026-11-29T19:13:21+24:00", .invalid(reason: "time zone offset hour 24 is out of range")),
        ("2026-11-29T19:13:21+01:60", .invalid(reason: "time zone offset minute 60 is out of range")),
        ("2026-1-29T19:13:21Z", .invalid(reason: "expected a 2-digit month, found '-'")),
        ("2026-11-29X19:13:21Z", .invalid(reason: "expected 'T' after the date, found 'X'")),
        ("2026-11-29T19:13Z", .invalid(reason: "expected ':' after the minutes, found 'Z'")),
        ("2026-11-29T19:13:21.Z", .invalid(reason: "expected a digit after '.', found 'Z'")),
        ("2026-11-29T19:13:21Zx", .invalid(reason: "expected end of text after the time zone, found 'x'")),
        ("2026-11-29T19:13:21 UTC", .invalid(reason: "expected '.', 'Z' or an offset after the seconds, found ' '")),
        ("2026-11-29T19:13:21\u{7}", .invalid(reason: "expected '.', 'Z' or an offset after the seconds, found U+0007")),
        ("20261-11-29T19:13:21Z", .invalid(reason: "expected a 4-digit year, found 5 digits")),
        ("", .invalid(reason: "expected a 4-digit year, found end of text")),
        ("2026-11-29T19:13:21+01:00:00", .invalid(reason: "expected end of text after the time zone, found ':'")),
        ("2026-11-29T19:13:21+010", .invalid(reason: "expected 2-digit offset minutes, found end of text")),
        ("2026-11-29T19:13:21+1", .invalid(reason: "expected a 2-digit offset hour, found end of text")),
        ("+999999999999-01-01T00:00:00Z", .invalid(reason: "date is out of range (more than 2^62 seconds from 2001-01-01)")),
    ]

    @Test(arguments: 0..<failures.count)
    func rejectsInvalidText(_ index: Int) {
        let (text, expected) = Self.failures[index]
        #expect(throws: expected) { try ISO8601.parse(text) }
    }

    @Test func errorDescriptionsExplainTheProblem() {
        #expect(ISO8601.ParseError.invalid(reason: "month 13 is out of range").description == "month 13 is out of range")
        #expect(ISO8601.ParseError.missingTimeZone.description.contains("no time zone"))
        #expect(throws: ISO8601.ParseError.missingTimeZone) { try ISO8601.parse("2026-11-29 19:13:21", allowDateOnly: true) }
    }
}
