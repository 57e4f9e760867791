import DialogGate
import Foundation
import Prefs
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `feed lint`, `feed explain`, `feed fetch`: DialogGate's remote-message feeds.
enum FeedCommand {
    static let command = Command(spec: CommandSpec(
        name: "feed", summary: "Lint a messages.json feed, explain which message an app would show, or fetch it.",
        usage: """
            prefs-tool feed lint FILE|URL [--strict]
                   prefs-tool [--store PATH] feed explain FILE|URL --bundle-id ID --app-version V --os-version V [--locale L] [--date ISO-8601] [--last-id N] [--installation-id ID] [--json]
                   prefs-tool [--store PATH] feed fetch URL [--force] [--allow-http]
            """,
        help: """
            lint: errors (invalid JSON with line:column, wrong types with JSON paths, duplicate ids, bad versions or dates)
              exit 65; warnings (unknown keys with a did-you-mean, http links, messages that can never match) go to
              stderr and exit 0, or 65 with --strict.
            explain: every message's checks, pass or fail and why, and the message the app would select. Without
              --last-id, the store's lastMessageId (0 without a store). --json prints {"selected": ID|null, "messages": […]}.
            fetch: the app's conditional fetch (If-None-Match, If-Modified-Since, max-age, backoff, size cap, timeout),
              with its cache kept in the store (a memory store without one): status, validators, cache age, messages.
              Failures (404, refused connection, timeout, oversized body) exit 74 with the reason; an invalid feed 65.
            Sources: a file path, - for stdin, or an http(s) or file URL (http only to loopback without --allow-http).
            """,
        options: ["bundle-id", "app-version", "os-version", "locale", "date", "last-id", "installation-id"],
        flags: ["strict", "json", "force", "allow-http"], positionals: 1...2)
    ) { arguments, context in
        let action = arguments.positionals[0]
        let source = arguments.positionals.count > 1 ? arguments.positionals[1] : nil
        switch action {
        case "lint": return try await lint(source, arguments, context)
        case "explain": return try await explain(source, arguments, context)
        case "fetch": return try await fetch(source, arguments, context)
        default:
            let hint = Suggestion.nearest(to: action, in: ["lint", "explain", "fetch"]).map { "; did you mean '\($0)'?" } ?? ""
            throw ToolError.usage("unknown feed action '\(action)'\(hint)", context.usage)
        }
    }

    // MARK: - lint

    static func lint(_ source: String?, _ arguments: ParsedArguments, _ context: ToolContext) async throws -> Int32 {
        let (data, name) = try await read(source, arguments, context)
        let issues = FeedLinter.lint(data, now: Date())
        for issue in issues {
            Terminal.note("\(name):\(issue.location): \(issue.severity.rawValue): \(issue.path): \(issue.message)")
        }
        let errors = issues.filter { $0.severity == .error }.count
        let warnings = issues.count - errors
        Terminal.note("\(name): \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        return errors > 0 || (warnings > 0 && arguments.flag("strict")) ? ToolError.Code.data.rawValue : 0
    }

    // MARK: - explain

    static func explain(_ source: String?, _ arguments: ParsedArguments, _ context: ToolContext) async throws -> Int32 {
        func required(_ name: String) throws -> String {
            guard let value = arguments.option(name), !value.isEmpty else { throw ToolError.usage("feed explain needs --\(name)", context.usage) }
            return value
        }
        let messageContext = MessageContext(
            bundleIdentifier: try required("bundle-id"), appVersion: try required("app-version"),
            osVersion: try required("os-version"), localeIdentifier: arguments.option("locale") ?? "en")
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
        let installationId = try arguments.option("installation-id")
            ?? prefs?.storedValue(forKey: MessageCenter.installationIdKey.name).flatMap { try? String(storedJSON: $0.json) } ?? ""
        let (data, name) = try await read(source, arguments, context)
        let feed: DecodedFeed
        do {
            feed = try FeedDecoder.decode(data)
        } catch {
            throw ToolError.data("\(name):\(error.location): \(error.path): \(error.message)")
        }
        for issue in feed.issues { Terminal.note("\(name):\(issue.location): \(issue.severity.rawValue): \(issue.path): \(issue.message)") }
        let report = MessageTargeting.explain(feed.messages, context: messageContext, now: now, lastMessageId: lastMessageId, installationId: installationId)
        if arguments.flag("json") {
            Output.json(.object([
                "selected": report.selected.map { .int($0.id) } ?? .null,
                "context": .object([
                    "bundleId": .string(messageContext.bundleIdentifier), "appVersion": .string(messageContext.appVersion),
                    "osVersion": .string(messageContext.osVersion), "locale": .string(messageContext.localeIdentifier),
                    "date": .string(ISO8601.format(now)), "lastMessageId": .int(lastMessageId),
                ]),
                "messages": .array(report.evaluations.map { evaluation in
                    .object([
                        "id": .int(evaluation.message.id),
                        "bundleId": .string(evaluation.message.bundleId),
                        "title": .string(evaluation.message.title),
                        "eligible": .bool(evaluation.isEligible),
                        "checks": .array(evaluation.checks.map { check in
                            .object(["rule": .string(check.rule.rawValue), "passed": .bool(check.passed), "detail": .string(check.detail)])
                        }),
                    ])
                }),
            ]))
        } else {
            Terminal.printData("context: \(messageContext), date \(ISO8601.format(now, fractionDigits: 0)), lastMessageId \(lastMessageId)")
            for evaluation in report.evaluations {
                let message = evaluation.message
                Terminal.printData("message \(message.id) \(ValueText.quoted(message.title)) for \(message.bundleId): \(evaluation.isEligible ? "eligible" : "not eligible")")
                for check in evaluation.checks { Terminal.printData("  \(check)") }
            }
            Terminal.printData("selected: \(report.selected.map { "message \($0.id) \(ValueText.quoted($0.title))" } ?? "none")")
        }
        return 0
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
        let prefs = context.store.isExplicit || context.store.exists ? try context.store.open(create: true, checked: true) : try Prefs(.memory)
        let options = FeedFetcher.Options(allowInsecureHTTP: arguments.flag("allow-http"))
        let fetcher = FeedFetcher(url: url, prefs: prefs, options: options)
        let result = await fetcher.fetch(force: arguments.flag("force"))
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
            if let retry = cache.nextRetryAt { Terminal.print("next retry: \(ISO8601.format(retry, fractionDigits: 0)) after \(cache.consecutiveFailures) failure\(cache.consecutiveFailures == 1 ? "" : "s")") }
        }
        if let feed = result.feed {
            Terminal.print("messages: \(feed.messages.count)")
            for message in feed.messages {
                Terminal.printData("  \(message.id)\t\(message.bundleId)\t\(ValueText.quoted(message.title))")
            }
            for issue in feed.issues { Terminal.note("\(url.absoluteString):\(issue.location): \(issue.severity.rawValue): \(issue.path): \(issue.message)") }
        }
        guard let error = result.error, result.source == .none || result.source == .cache else { return 0 }
        if result.source == .cache {
            Terminal.warning("\(error); showing the last good feed")
            return ToolError.Code.io.rawValue
        }
        if case .invalidFeed = error { throw ToolError.data("\(url.absoluteString): \(error)") }
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
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
        request.httpMethod = "GET"
        do {
            let response = try await FeedLoaders.standard().load(request, limits: FeedLoadLimits(maximumBytes: 1 << 20, allowInsecureHTTP: arguments.flag("allow-http")))
            guard (200...299).contains(response.statusCode) else { throw ToolError.io("\(source): HTTP \(response.statusCode)") }
            return (response.body, source)
        } catch let error as ToolError {
            throw error
        } catch {
            throw ToolError.io("\(source): \(error)")
        }
    }
}
