import DialogGate
import MessageFeed
import MessageFeedFetching
import Foundation
import Prefs
import PrefsJSON
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `feed lint`, `feed explain`, `feed fetch`: DialogGate's remote-message feeds.
enum FeedCommand {
    static let lintUsage = "prefs-tool feed lint FILE|URL [--strict] [--allow-http]"
    static let explainUsage = """
        prefs-tool [--store PATH | --app ID] feed explain FILE|URL [--context FILE] --bundle-id ID --app-version V
                 --os-version V [--locale L] [--date ISO-8601] [--last-id N] [--installation-id ID] [--cached]
                 [--parameters NAME=VALUE,…] [--json | -q | --failures-only] [--allow-http]
        """
    static let fetchUsage = "prefs-tool [--store PATH] feed fetch URL [--force] [--allow-http]"

    static let command = Command(
        spec: CommandSpec(
            name: "feed", summary: "Lint a feed, explain which message an app would show, or fetch it.",
            usage: """
                \(lintUsage)
                       \(explainUsage.replacingOccurrences(of: "\n", with: "\n       "))
                       \(fetchUsage)
                """,
            help: """
                lint: errors (invalid JSON with line:column, wrong types with JSON paths, duplicate ids, bad versions or
                  dates) exit 65; warnings (unknown keys with a did-you-mean, http links, messages that can never match)
                  exit 0, or 65 with --strict. Each finding is a line on stdout, FILE:LINE:COLUMN: SEVERITY: PATH: TEXT,
                  so a pipe can read them; the count goes to stderr.
                explain: every message's checks, pass or fail and why (failed checks first; --failures-only shows
                  only those), and the message the app would select. The store's lastMessageId is used unless --last-id
                  is given (0 without a store). The context comes from the options, else from --context FILE (a saved
                  'feed explain --json' output, or its "context" object), else the bundle id from --app ID. --json
                  prints {"selected": ID|null, "messages": […]}. -q (--quiet) prints nothing: the exit status says
                  whether the app would show a message (0) or none (1), as grep -q does. --cached explains the feed
                  the store keeps for URL (what the app shows offline); when URL cannot be read, that feed is used
                  with a warning, as the app would use it. A message's conditions (feed format 2) are judged on the
                  store's launches, donations and stored parameters, each listed with its current value under the
                  message; a parameter the app sets in memory is unknown unless --parameters gives it (plan=free,seats=5:
                  true/false, numbers, else text; "5" in quotes is text). The store's skipped update version and a
                  message forced with 'messages force' count as in the app; the gate's display frequency is not known.
                fetch: the app's conditional fetch (If-None-Match, If-Modified-Since, max-age, backoff, size cap, timeout),
                  with its cache kept in the store (a memory store without one): status, validators, cache age, messages.
                  Failures (404, refused connection, timeout, oversized body) exit 74 with the reason; an invalid feed 65.
                  A first fetch of a URL that fails leaves nothing in the store (no record of the failure, and no
                  store when the fetch created it), so a mistyped URL leaves no key behind.
                Sources: a file path, - for stdin, or an http(s) or file URL (http only to loopback without --allow-http).
                A URL is read as the app reads it: within 10 s in all, redirects included.
                Each action takes only its own options.
                """,
            actions: [
                CommandSpec(name: "feed lint", summary: "", usage: lintUsage, help: "", flags: ["strict", "allow-http"], positionals: 1...1),
                CommandSpec(
                    name: "feed explain", summary: "", usage: explainUsage, help: "",
                    options: [
                        "bundle-id", "app-version", "os-version", "locale", "date", "last-id", "installation-id", "context", "parameters",
                    ],
                    flags: ["json", "quiet", "failures-only", "cached", "allow-http"], positionals: 1...1, shortFlags: ["q": "quiet"]),
                CommandSpec(name: "feed fetch", summary: "", usage: fetchUsage, help: "", flags: ["force", "allow-http"], positionals: 1...1),
            ])
    ) { arguments, context in
        let source = arguments.positionals.first
        switch arguments.action {
        case "lint": return try await lint(source, arguments, context)
        case "explain": return try await explain(source, arguments, context)
        default: return try await fetch(source, arguments, context)
        }
    }

    // MARK: - lint

    static func lint(_ source: String?, _ arguments: ParsedArguments, _ context: ToolContext) async throws -> Int32 {
        let (data, name) = try await read(source, arguments, context)
        let issues = FeedLinter.lint(data, now: Date())
        for issue in issues {
            Terminal.printData(Terminal.oneLine("\(name):\(issue)"))
        }
        let errors = issues.filter { $0.severity == .error }.count
        let warnings = issues.count - errors
        Terminal.note("\(name): \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        return errors > 0 || (warnings > 0 && arguments.flag("strict")) ? ToolError.Code.data.rawValue : 0
    }

    // MARK: - explain

    static func explain(_ source: String?, _ arguments: ParsedArguments, _ context: ToolContext) async throws -> Int32 {
        if arguments.flag("json"), arguments.flag("quiet") { throw ToolError.usage("give --json or -q, not both", context.usage) }
        // Each part of the context: the option, else the saved context, else (the bundle id) the app --app names.
        let saved = try arguments.option("context").map { try savedContext(at: $0) } ?? [:]
        func part(_ option: String, _ member: String) throws -> String {
            if let value = arguments.option(option), !value.isEmpty { return value }
            if let value = saved[member], !value.isEmpty { return value }
            if option == "bundle-id", case .app(let identifier) = context.store.origin { return identifier }
            if option == "locale" { return "en" }
            throw ToolError.usage("feed explain needs --\(option) (or --context FILE: a saved 'feed explain --json')", context.usage)
        }
        let messageContext = MessageContext(
            bundleIdentifier: try part("bundle-id", "bundleId"), appVersion: try part("app-version", "appVersion"),
            osVersion: try part("os-version", "osVersion"), localeIdentifier: try part("locale", "locale"))
        var now = Date()
        if let text = arguments.option("date") {
            do { now = try ISO8601.parse(text, allowDateOnly: true) } catch {
                throw ToolError.usage("--date \(ValueText.quoted(text)): \(error); expected ISO-8601 such as 2026-11-29T10:00:00Z", context.usage)
            }
        }
        let prefs = context.store.exists ? try context.store.open() : nil
        // Raw reads: reading a typed key records its declaration, which the store writes when the tool exits,
        // and explain only reads.
        let lastMessageId: Int
        if let text = arguments.option("last-id") {
            guard let number = Int(text) else { throw ToolError.usage("--last-id takes an integer", context.usage) }
            lastMessageId = number
        } else {
            // Read as the app reads it; a value it cannot read is an error here, where the app shows nothing.
            switch MessageCenter.lastMessageId(from: try prefs?.storedValue(forKey: "lastMessageId")) {
            case .success(let id): lastMessageId = id
            case .failure(let error): throw ToolError.data("\(context.store.path): \(error)")
            }
        }
        // The ids passed over when a higher one was acknowledged: still shown (none with --last-id, a what-if).
        let passedOver =
            arguments.option("last-id") != nil
            ? []
            : Set(
                try prefs?.storedValue(forKey: "lastMessageId.passedOver").flatMap { try? $0.decode([Int].self) } ?? [])
        let installationId =
            try arguments.option("installation-id")
            ?? prefs?.storedValue(forKey: MessageCenter.installationIdKey.name).flatMap { try? $0.decode(String.self) } ?? ""
        let (data, name) = try await explainedFeed(source, prefs: prefs, arguments, context)
        let feed: DecodedFeed
        do {
            feed = try FeedDecoder.decode(data)
        } catch {
            throw ToolError.data("\(name):\(error.line):\(error.column): \(error.path): \(error.message)")
        }
        for issue in feed.issues { Terminal.note("\(name):\(issue)") }
        // What the app's store knows beyond the feed, as the app's refresh reads it: conditions on its usage, the
        // skipped update version, a one-shot forced message.
        let parameters = try self.parameters(arguments.option("parameters"), context)
        let appVersion = messageContext.appVersion, date = now
        var state = MessageTargeting.State()
        state.skippedVersion = try prefs?.storedValue(forKey: "lastMessageId.skippedVersion").flatMap { try? $0.decode(String.self) }
        state.forcedMessageId = try prefs?.storedValue(forKey: MessageCenter.forcedKey().name).flatMap { try? $0.decode(Int.self) }
        state.conditions = { condition in
            MessageCenter.conditionSummary(
                MessageCenter.conditionStatus(of: condition, prefs: prefs, parameters: parameters, appVersion: appVersion, now: date))
        }
        var conditions: [Int: ConditionStatus] = [:]  // by feed index, for the listing
        for message in feed.messages {
            guard let condition = message.conditions else { continue }
            conditions[message.feedIndex] = MessageCenter.conditionStatus(
                of: condition, prefs: prefs, parameters: parameters, appVersion: appVersion, now: now)
        }
        let report = MessageTargeting.explain(
            feed.messages, context: messageContext, now: now, lastMessageId: lastMessageId, passedOver: passedOver,
            installationId: installationId, state: state)
        if arguments.flag("quiet") {
            return report.selected == nil ? 1 : 0
        } else if arguments.flag("json") {
            Output.json(
                .object([
                    "selected": report.selected.map { .int($0.id) } ?? .null,
                    "forced": .bool(report.forced),
                    "context": .object([
                        "bundleId": .string(messageContext.bundleIdentifier), "appVersion": .string(messageContext.appVersion),
                        "osVersion": .string(messageContext.osVersion), "locale": .string(messageContext.localeIdentifier),
                        "date": .string(ISO8601.format(now)), "lastMessageId": .int(lastMessageId),
                    ]),
                    "messages": .array(
                        report.evaluations.map { evaluation in
                            var object: [String: JSON] = [
                                "id": .int(evaluation.message.id),
                                "bundleId": .string(evaluation.message.bundleId),
                                "title": .string(evaluation.message.title),
                                "eligible": .bool(evaluation.isEligible),
                                "checks": .array(
                                    evaluation.checks.map { check in
                                        .object(["rule": .string(check.rule.rawValue), "passed": .bool(check.passed), "detail": .string(check.detail)])
                                    }),
                            ]
                            if let status = conditions[evaluation.message.feedIndex] {
                                object["conditions"] = .array(
                                    status.flattened.map { depth, status in
                                        .object([
                                            "condition": .string(status.condition.description), "current": .string(status.current),
                                            "met": status.met.map(JSON.bool) ?? .null, "depth": .int(depth),
                                        ])
                                    })
                            }
                            return .object(object)
                        }),
                ]))
        } else {
            Terminal.printData("context: \(messageContext), date \(ISO8601.format(now, fractionDigits: 0)), lastMessageId \(lastMessageId)")
            for evaluation in report.evaluations {
                let message = evaluation.message
                Terminal.printData(
                    "message \(message.id) \(ValueText.quoted(message.title)) for \(message.bundleId): \(evaluation.isEligible ? "eligible" : "not eligible")")
                // The checks that failed first: they are the answer to "why not".
                let checks = evaluation.failedChecks + (arguments.flag("failures-only") ? [] : evaluation.checks.filter(\.passed))
                for check in checks { Terminal.printData("  \(check)") }
                // Every condition with its current value, as `dialogs explain` lists a dialog's.
                if let status = conditions[message.feedIndex], !arguments.flag("failures-only") || status.met != true {
                    Terminal.printData("  conditions:")
                    for (depth, status) in status.flattened {
                        let met = status.met.map { $0 ? "met" : "not met" } ?? "unknown"
                        let isLeaf = status.heading == status.condition.description
                        Terminal.printData(
                            String(repeating: "  ", count: depth + 2) + "\(met)\t" + (isLeaf ? "\(status.heading)\tnow \(status.current)" : status.heading))
                    }
                }
            }
            let forced = report.forced ? " (forced by 'messages force': the app's next refresh shows it once)" : ""
            Terminal.printData("selected: \(report.selected.map { "message \($0.id) \(ValueText.quoted($0.title))" } ?? "none")\(forced)")
        }
        return 0
    }

    /// `--parameters plan=free,seats=5`: the parameters the app sets in memory, which the store does not know. `true` and
    /// `false` are Booleans, an integer or a number is one, `"…"` in double quotes is text, anything else text.
    static func parameters(_ text: String?, _ context: ToolContext) throws -> [String: DialogCondition.Value] {
        guard let text, !text.isEmpty else { return [:] }
        var parameters: [String: DialogCondition.Value] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: true) {
            guard let equals = part.firstIndex(of: "="), equals != part.startIndex else {
                throw ToolError.usage("--parameters \(ValueText.quoted(String(part))): expected NAME=VALUE", context.usage)
            }
            let name = String(part[..<equals]).trimmingCharacters(in: .whitespaces)
            let raw = String(part[part.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
            let value: DialogCondition.Value =
                if raw == "true" || raw == "false" {
                    .bool(raw == "true")
                } else if let int = Int(raw) {
                    .int(int)
                } else if let double = Double(raw), double.isFinite {
                    .double(double)
                } else if raw.count >= 2, raw.hasPrefix("\""), raw.hasSuffix("\"") {
                    .string(String(raw.dropFirst().dropLast()))
                } else {
                    .string(raw)
                }
            parameters[name] = value
        }
        return parameters
    }

    /// The context members of a saved `feed explain --json` output (or of its `context` object alone).
    static func savedContext(at path: String) throws -> [String: String] {
        guard case .object(let document)? = try? JSON.parse(try TransferCommands.read(path)) else {
            throw ToolError.data("\(path): not a JSON object; --context reads what 'feed explain --json' writes")
        }
        let members: [String: JSON]
        if case .object(let inner)? = document["context"] { members = inner } else { members = document }
        return members.compactMapValues { if case .string(let text) = $0 { text } else { nil } }
    }

    /// The feed to explain: the source, or the feed the store keeps for a URL source (with --cached, or when the
    /// URL cannot be read: what the app would then show).
    static func explainedFeed(_ source: String?, prefs: Prefs?, _ arguments: ParsedArguments, _ context: ToolContext) async throws -> (Data, String) {
        let url = source.flatMap(URL.init(string:)).flatMap { ["http", "https", "file"].contains($0.scheme?.lowercased() ?? "") ? $0 : nil }
        func cached() throws -> (body: String, fetchedAt: Date?)? {
            guard let url, let stored = try prefs?.storedValue(forKey: FeedCache.key(for: url).name) else { return nil }
            guard let cache = try? stored.decode(FeedCache.self), cache.url == url.absoluteString, let body = cache.body else { return nil }
            return (body, cache.fetchedAt)
        }
        func described(_ fetchedAt: Date?) -> String {
            guard let fetchedAt else { return "fetch date unknown" }
            let limit = FeedOptions().maximumCacheAge.components.seconds
            let stale = Date().timeIntervalSince(fetchedAt) >= Double(limit)
            return "fetched \(ISO8601.format(fetchedAt, fractionDigits: 0))"
                + (stale ? "; older than the \(limit / 86_400) days the app uses a kept feed for, so the app shows none of it" : "")
        }
        if arguments.flag("cached") {
            guard url != nil else { throw ToolError.usage("--cached explains the feed the store keeps for a URL; give the feed's URL", context.usage) }
            guard let (body, fetchedAt) = try cached() else {
                throw ToolError(
                    code: .notFound, message: "\(context.store.path) keeps no feed for \(source ?? ""); 'prefs-tool feed fetch URL' fetches it as the app does")
            }
            Terminal.note("explaining the feed kept in the store (\(described(fetchedAt)))")
            return (Data(body.utf8), "\(source ?? "") (cached)")
        }
        do {
            return try await read(source, arguments, context)
        } catch let error as ToolError where error.code == .io {
            guard let (body, fetchedAt) = try cached() else { throw error }
            Terminal.warning("\(error.message); explaining the feed kept in the store instead (\(described(fetchedAt))), as the app would show it")
            return (Data(body.utf8), "\(source ?? "") (cached)")
        }
    }

    // MARK: - fetch

    static func fetch(_ source: String?, _ arguments: ParsedArguments, _ context: ToolContext) async throws -> Int32 {
        guard let source, let url = URL(string: source), url.scheme != nil else {
            throw ToolError.usage("feed fetch needs a URL such as https://example.com/messages.json", context.usage)
        }
        // Refused before the store is opened, so a refused URL creates no store and records no backoff.
        if let refusal = FeedURLPolicy.refusal(for: url, allowInsecureHTTP: arguments.flag("allow-http")) {
            let hint = if case .insecureURL = refusal { " (pass --allow-http to allow it)" } else { "" }
            throw ToolError.usage("\(refusal)\(hint)", context.usage)
        }
        let created = NewStoreFiles(path: context.store.path)
        let onDisk = context.store.isExplicit || context.store.exists
        let prefs = onDisk ? try context.store.open(create: true, checked: true) : try Prefs(.memory)
        let options = FeedOptions(allowInsecureHTTP: arguments.flag("allow-http"))
        let fetcher = FeedFetcher(url: url, prefs: prefs, options: options)
        let keptBefore = try prefs.storedValue(forKey: fetcher.cacheKey.name) != nil
        let result = await fetcher.fetch(force: arguments.flag("force"))
        if result.feed == nil, result.error != nil, !keptBefore, onDisk {
            // A first fetch that failed (a mistyped URL, most often) leaves nothing behind: no failure record
            // or declaration under a key for that URL, and no store when the fetch created it.
            try prefs.setStoredValue(nil, forKey: fetcher.cacheKey.name)
            try prefs.removeDeclarations([fetcher.cacheKey.name])
            if try prefs.snapshot().isEmpty, try prefs.declaredKeys().isEmpty {
                try prefs.close()
                created.remove()
            }
        }
        let now = Date()
        switch result.source {
        case .network: Terminal.print("status: 200 OK (fetched)")
        case .notModified: Terminal.print("status: 304 Not Modified (the stored feed is current)")
        case .cache where result.requestSent:
            Terminal.print("status: requested, and the answer was not used (\(result.error.map { "\($0)" } ?? "no reason given")); the last good feed is shown")
        case .cache: Terminal.print("status: not requested (\(result.error.map { "\($0)" } ?? "the stored feed is fresh"); --force to request it now)")
        case .none: break
        }
        if let cache = fetcher.cache {
            if let etag = cache.etag { Terminal.printData("etag: \(etag)") }
            if let lastModified = cache.lastModified { Terminal.printData("last-modified: \(lastModified)") }
            if let fetchedAt = cache.fetchedAt {
                Terminal.print("fetched: \(ISO8601.format(fetchedAt, fractionDigits: 0)) (age \(Int(now.timeIntervalSince(fetchedAt))) s)")
            }
            if let maxAge = cache.maxAge { Terminal.print("max-age: \(maxAge) s") }
            if let retry = cache.nextRetryAt {
                Terminal.print(
                    "next retry: \(ISO8601.format(retry, fractionDigits: 0)) after \(cache.consecutiveFailures) failure\(cache.consecutiveFailures == 1 ? "" : "s")"
                )
            }
        }
        if let feed = result.feed {
            Terminal.print("messages: \(feed.messages.count)")
            for message in feed.messages {
                Terminal.printData("  \(message.id)\t\(message.bundleId)\t\(ValueText.quoted(message.title))")
            }
            for issue in feed.issues { Terminal.note("\(url.absoluteString):\(issue)") }
        }
        guard let error = result.error, result.source == .none || result.source == .cache else { return 0 }
        if result.source == .cache {
            Terminal.warning("\(error); showing the last good feed")
            return ToolError.Code.io.rawValue
        }
        if case .invalidFeed = error { throw ToolError.data("\(url.absoluteString): \(error)") }
        if case .backingOff = error { throw ToolError.io("\(url.absoluteString): \(error) (--force to request it now)") }
        throw ToolError.io("\(url.absoluteString): \(error)")
    }

    // MARK: - Reading a source

    /// The bytes of a feed: a file, stdin, or a URL loaded with the fetcher's rules (no cache).
    static func read(_ source: String?, _ arguments: ParsedArguments, _ context: ToolContext) async throws -> (Data, String) {
        guard let source else { throw ToolError.usage("missing FILE or URL", context.usage) }
        if source == "-" { return (FileHandle.standardInput.readDataToEndOfFile(), "<stdin>") }
        guard let url = URL(string: source), let scheme = url.scheme?.lowercased(), ["http", "https", "file"].contains(scheme) else {
            return (try TransferCommands.read(source), source)
        }
        if scheme == "file" { return (try TransferCommands.read(url.path), source) }
        if let refusal = FeedURLPolicy.refusal(for: url, allowInsecureHTTP: arguments.flag("allow-http")) {
            throw ToolError.io("\(source): \(refusal)")
        }
        do {
            // One deadline for the whole load, redirects included, as feed fetch has (FeedOptions' 10 s).
            let response = try await FeedLoaders.load(url, options: FeedOptions(allowInsecureHTTP: arguments.flag("allow-http")))
            guard (200...299).contains(response.statusCode) else { throw ToolError.io("\(source): HTTP \(response.statusCode)") }
            return (response.body, source)
        } catch let error as ToolError {
            throw error
        } catch {
            throw ToolError.io("\(source): \(error)")
        }
    }
}
