import Foundation

/// One targeting rule applied to one message: passed or failed, and why.
///
/// ```swift
/// let check = report.evaluations[0].checks[1]
/// check.summary       // "id > lastMessageId (3 > 2)"
/// check.description   // "pass: id > lastMessageId (3 > 2)"
/// ```
package struct TargetingCheck: Sendable, Hashable, CustomStringConvertible {
    /// The rules, in the order they are reported.
    ///
    /// ```swift
    /// TargetingCheck.Rule.id.rawValue   // "id > lastMessageId"
    /// ```
    package enum Rule: String, Sendable, Hashable, CaseIterable {
        /// The message is for this app.
        case bundleId
        /// The message is newer than the last one acknowledged.
        case id = "id > lastMessageId"
        /// The message has not been withdrawn with `"cancelled": true`.
        case cancelled
        /// The current date is on or after `startsAt`.
        case startsAt
        /// The current date is before `endsAt`.
        case endsAt
        /// The app version matches `appVersions`.
        case appVersions
        /// The OS version matches `osVersions`.
        case osVersions
        /// The locale falls under one of `locales`.
        case locales
        /// The installation's bucket is below `rolloutPercent`.
        case rolloutPercent
        /// The installation is one of `testDevices`.
        case testDevices
        /// An update message: the app is below its version, the version was released long enough ago, and it was not
        /// skipped.
        case update
        /// The message's `conditions` on the app's usage hold.
        case conditions
        /// The gate's display frequency allows a message now (a `MessageCenter` made with a gate).
        case displayFrequency
    }

    /// The rule checked.
    package var rule: Rule
    /// Whether the message passes it.
    package var passed: Bool
    /// The values compared, e.g. `3 > 2`, `bucket 37 < 50`, `not set`.
    package var detail: String

    /// Creates a check.
    ///
    /// ```swift
    /// TargetingCheck(rule: .rolloutPercent, passed: true, detail: "bucket 37 < 50")
    /// ```
    package init(rule: Rule, passed: Bool, detail: String) {
        self.rule = rule
        self.passed = passed
        self.detail = detail
    }

    /// `rule (detail)`, e.g. `rolloutPercent (bucket 37 < 50)`.
    package var summary: String { "\(rule.rawValue) (\(detail))" }

    /// `pass: summary` or `fail: summary`.
    package var description: String { "\(passed ? "pass" : "fail"): \(summary)" }
}

/// Every targeting check of one message.
///
/// ```swift
/// let evaluation = report.evaluations[0]
/// evaluation.isEligible                    // false
/// evaluation.failedChecks.map(\.summary)   // ["appVersions (1.0 matches none of [\"0\"])"]
/// ```
package struct MessageEvaluation: Sendable, Hashable, CustomStringConvertible {
    /// The message evaluated.
    package var message: RemoteMessage
    /// One check per ``TargetingCheck/Rule`` that applies, in rule order.
    package var checks: [TargetingCheck]

    /// Creates an evaluation.
    ///
    /// ```swift
    /// let evaluation = MessageEvaluation(message: message, checks: [])
    /// ```
    package init(message: RemoteMessage, checks: [TargetingCheck]) {
        self.message = message
        self.checks = checks
    }

    /// Whether every check passed.
    package var isEligible: Bool { checks.allSatisfy(\.passed) }

    /// The checks that failed.
    package var failedChecks: [TargetingCheck] { checks.filter { !$0.passed } }

    /// The check for `rule`, if it was made.
    ///
    /// ```swift
    /// evaluation.check(.rolloutPercent)?.detail   // "bucket 37 < 50"
    /// ```
    package func check(_ rule: TargetingCheck.Rule) -> TargetingCheck? {
        checks.first { $0.rule == rule }
    }

    /// A header line (`message 3 at $[0]: eligible`) followed by one indented line per check.
    package var description: String {
        let header = "message \(message.id) at $[\(message.feedIndex)]: \(isEligible ? "eligible" : "not eligible")"
        return ([header] + checks.map { "  \($0)" }).joined(separator: "\n")
    }
}

/// The outcome of targeting a whole feed: each message's checks and the message selected, if any.
///
/// ```swift
/// let report = MessageTargeting.explain(feed.messages, context: context, now: Date(),
///                                       lastMessageId: 2, installationId: id)
/// print(report)            // every check of every message, then "selected: message 3"
/// report.selected?.title
/// ```
package struct TargetingReport: Sendable, Hashable, CustomStringConvertible {
    /// One evaluation per message, in feed order.
    package var evaluations: [MessageEvaluation]
    /// The message to show: among the eligible ones the highest priority, then the highest id; or the one a QA override
    /// forces.
    package var selected: RemoteMessage?
    /// Whether a QA override forced ``selected`` (`prefs-tool messages force ID`), whatever its checks.
    package var forced: Bool

    /// Creates a report.
    ///
    /// ```swift
    /// let empty = TargetingReport(evaluations: [], selected: nil)
    /// ```
    package init(evaluations: [MessageEvaluation], selected: RemoteMessage?, forced: Bool = false) {
        self.evaluations = evaluations
        self.selected = selected
        self.forced = forced && selected != nil
    }

    /// The eligible messages, in feed order.
    package var eligible: [RemoteMessage] { evaluations.filter(\.isEligible).map(\.message) }

    /// Every evaluation, then `selected: message N at $[i]` or `selected: none`.
    package var description: String {
        let selection =
            selected.map { "selected: message \($0.id) at $[\($0.feedIndex)]" + (forced ? " (forced by a QA override)" : "") } ?? "selected: none"
        return (evaluations.map(\.description) + [selection]).joined(separator: "\n")
    }
}
