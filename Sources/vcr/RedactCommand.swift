import Foundation
import HTTPVCR

/// `vcr redact PATH... --header NAME --query NAME --json-key NAME --secrets`: hides secrets in recorded cassettes
/// with the filters recording uses.
enum RedactCommand {
    static var command: Command {
        Command(
            name: "redact",
            abstract: "Hide secrets in cassettes with the filters recording uses, without recording again.",
            usage: [
                "<path> ... [--header <name> ...] [--query <name> ...] [--json-key <name> ...] [--secrets]",
                "           [--placeholder <text>] [--remove] [--dry-run]",
            ],
            arguments: [(
                "<path>",
                "HTTPVCR cassettes (.json or .plist), or folders searched recursively for them. Convert other "
                    + "formats first."
            )],
            options: [
                .repeated("header", "<name>", "Replace this header's value, in requests and responses (repeatable)."),
                .repeated("query", "<name>", "Replace this query parameter in every URL (repeatable)."),
                .repeated(
                    "json-key",
                    "<name>",
                    "Replace this key at any depth of JSON bodies, and form fields of this name, in requests "
                        + "and responses (repeatable)."
                ),
                .repeated("form-key", "<name>", "The same as --json-key (form fields are covered by both)."),
                .value(
                    "placeholder",
                    "<text>",
                    "What secrets are replaced with (default: \(VCRConfiguration.filteredPlaceholder))."
                ),
                .flag(
                    "secrets",
                    "Also hide every name recording hides by default (the names vcr lint reports), and their "
                        + "echoes, with \(VCRConfiguration.filteredPlaceholder) as recording writes them."
                ),
                .flag("remove", "Remove the named headers, parameters and keys instead of replacing their values."),
                .flag("dry-run", short: "n", "Show what would change, and write nothing."),
            ],
            discussion: """
                The cassette is rewritten with the filters a recording would have used to hide these names: \
                headersFilter, queryParametersFilter, postBodyFilter and responseBodyFilter, each replacing the \
                named values with the placeholder. They apply everywhere recording applies them: request headers, \
                URLs and bodies, redirect hops and their Location, response URLs, the failing URLs of errors, and \
                response bodies (decompressed first when still compressed, the body cut back at its original \
                chunk boundaries, Content-Length kept in step). Recording never filters response headers; \
                --header does, for secrets such as Set-Cookie. Names are compared case-insensitively for headers \
                and exactly for parameters and keys.

                --secrets applies what recording does by default (filtersSecrets): secret-named headers (requests \
                and responses, cookie names kept), query parameters, JSON and form keys, URL passwords, and every \
                echo of their values, so a cassette recorded before these defaults looks as if recorded with them. \
                It always writes \(VCRConfiguration.filteredPlaceholder); --placeholder and --remove apply to the \
                names given with the other options.

                Everything else stays as it was, byte for byte, and each file is replaced atomically. When nothing \
                matches, the file is not touched. With --dry-run, the changes are listed per request (old secret \
                values shortened) and nothing is written.

                Any number of files and folders can be named. A folder is searched recursively for .json, .plist \
                and .har files, as vcr lint searches it (hidden folders skipped). Cassettes of other tools found \
                there (HAR, YAHTTPVCR, VCR.py) are skipped with a note; named explicitly, they are an error. \
                Each file is redacted on its own, and a total line follows when there is more than one. A file \
                that cannot be read or written is reported and the others are still redacted.

                A redaction on the request side (headers, query parameters, request body keys) changes what the \
                recorded requests look like: the tests that replay the cassette need the same filter in their \
                configuration (headersFilter, queryParametersFilter, postBodyFilter, or secretNames) to keep \
                matching. HTTPVCR's secure defaults already filter the names --secrets hides, so a cassette \
                redacted with --secrets keeps matching with the default configuration.

                Exit status: 0 when every file was redacted or had nothing to redact (an empty folder too); 2 \
                when a path does not exist, a file cannot be read or written, a cassette of another format is \
                named, or the command line is wrong.
                """,
            examples: [
                "vcr redact Cassettes/login.json --header Authorization --json-key password",
                "vcr redact Cassettes/search.json --query api_key --placeholder '<api-key>' --dry-run",
                "vcr redact Cassettes/session.json --header Set-Cookie --header Cookie --remove",
                "vcr redact Cassettes.bundle --secrets --dry-run",
                "vcr redact Tests/Cassettes Cassettes/extra.json --header X-Session --dry-run",
            ],
            run: { arguments in Result { () throws(CommandError) in try run(arguments) } }
        )
    }

    static func run(_ arguments: ParsedArguments) throws(CommandError) -> ExitStatus {
        guard !arguments.positionals.isEmpty else { throw CommandError.usage("missing <path>", of: command) }
        let headers = arguments.values("header")
        let queries = arguments.values("query")
        let keys = arguments.values("json-key") + arguments.values("form-key")
        let secrets = arguments.flag("secrets")
        guard !headers.isEmpty || !queries.isEmpty || !keys.isEmpty || secrets else {
            throw CommandError.usage(
                "nothing to redact: name at least one --header, --query or --json-key, or use --secrets", of: command
            )
        }
        for name in headers + queries + keys where name.isEmpty {
            throw CommandError.usage("an empty name cannot be redacted", of: command)
        }
        if arguments.flag("remove"), arguments.value("placeholder") != nil {
            throw CommandError.usage("--remove and --placeholder cannot be used together", of: command)
        }
        // --secrets writes what recording writes, so that the default configuration still matches: --placeholder
        // and --remove reach only the names given.
        let names = headers + queries + keys
        if names.isEmpty, arguments.flag("remove") || arguments.value("placeholder") != nil {
            throw CommandError.usage(
                "--placeholder and --remove apply to the names given with --header, --query and --json-key; "
                    + "--secrets always writes \(VCRConfiguration.filteredPlaceholder), as recording does",
                of: command
            )
        }
        let replacement: String? = arguments.flag("remove")
            ? nil
            : arguments.value("placeholder") ?? VCRConfiguration.filteredPlaceholder
        let redaction = Redaction(
            configuration: configuration(
                headers: headers, queries: queries, keys: keys, replacement: replacement, secrets: secrets
            ),
            responseHeaders: replacing(headers, with: replacement),
            asked: (headers.map { "header \($0)" } + queries.map { "query parameter \($0)" }
                + keys.map { "key \($0)" } + (secrets ? ["secret name"] : [])).joined(separator: ", "),
            dryRun: arguments.flag("dry-run")
        )

        // One file named: exactly as before, its errors end the command.
        if arguments.positionals.count == 1, let path = arguments.positionals.first, !isFolder(path) {
            let outcome = try redaction.run(path, isNamed: true)
            if case .changed = outcome {} else if case .unchanged = outcome {
                Console.out("\(path): nothing to redact (no \(redaction.asked) with a value to replace); the file is unchanged")
            }
            return .success
        }

        // Several paths, or folders: each file on its own, its errors reported and the others still redacted.
        var files: [(path: String, isNamed: Bool)] = []
        var seen: Set<String> = []
        var failed = 0
        var missing = 0
        for path in arguments.positionals {
            guard FileManager.default.fileExists(atPath: path) else {
                Console.out("\(path): error: no such file or folder")
                failed += 1
                missing += 1
                continue
            }
            let found = isFolder(path)
                ? LintCommand.cassettes(in: path).map { ($0, false) }
                : [(path, true)]
            if found.isEmpty {
                Console.out("\(path): nothing to redact: no cassettes (.json, .plist) in this folder")
            }
            // A file named twice, or named and found in a folder, is redacted once.
            for file in found where seen.insert(canonical(file.0)).inserted {
                files.append(file)
            }
        }
        var fields = 0
        var requests = 0
        var changedFiles = 0
        for file in files {
            do {
                switch try redaction.run(file.path, isNamed: file.isNamed) {
                case let .changed(changedFields, changedRequests):
                    fields += changedFields
                    requests += changedRequests
                    changedFiles += 1
                case .unchanged:
                    Console.out("\(file.path): nothing to redact")
                case let .skipped(reason):
                    Console.out("\(file.path): skipped: \(reason)")
                }
            } catch {
                Console.out("\(file.path): error: \(error.message)")
                failed += 1
            }
        }
        // A total line when there was more than one file: each file already has its own line.
        if files.count + missing > 1 {
            let cassettes = files.count == 1 ? "1 cassette" : "\(files.count) cassettes"
            var total = redaction.dryRun ? "vcr redact: would change" : "vcr redact: redacted"
            total += " \(fields) field\(fields == 1 ? "" : "s") in \(requests) request\(requests == 1 ? "" : "s")"
                + " across \(changedFiles) of \(cassettes)"
            if redaction.dryRun { total += " (dry run: nothing written)" }
            if failed > 0 { total += "; \(failed) could not be read or written" }
            Console.out(total)
        }
        return failed > 0 ? .failure : .success
    }

    /// The file a path names, symbolic links and `..` resolved, to redact each file once.
    private static func canonical(_ path: String) -> String {
        CassetteInput.url(path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    private static func isFolder(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
    }

    /// One redaction, run on each cassette.
    struct Redaction {
        let configuration: VCRConfiguration
        let responseHeaders: [String: String?]
        /// What was asked for, in words, for "nothing to redact".
        let asked: String
        let dryRun: Bool

        enum Outcome {
            case changed(fields: Int, requests: Int)
            case unchanged
            /// A foreign cassette found in a folder: left alone.
            case skipped(String)
        }

        /// Redacts one cassette and prints its changes. `isNamed`: the user named the file (a foreign format is
        /// then an error, with the command that converts it), rather than it being found in a folder.
        func run(_ path: String, isNamed: Bool) throws(CommandError) -> Outcome {
            let (tape, format) = try CassetteInput.read(path)
            guard !format.isForeign else {
                guard isNamed else { return .skipped("a \(CassetteInput.describe(format)) cassette (convert it first)") }
                let converted = CassetteInput.url(path).deletingPathExtension().lastPathComponent + ".json"
                throw CommandError(
                    message: "\(path) is a \(CassetteInput.describe(format)) cassette; redact rewrites HTTPVCR cassettes "
                        + "only. Convert it first: vcr convert \(path) \(converted)"
                )
            }
            let redacted = tape.redacted(with: configuration, responseHeaders: responseHeaders)
            let changes = TapeDiff.changes(from: tape, to: redacted)
            guard !changes.isEmpty else { return .unchanged }
            let changedFields = changes.reduce(0) { $0 + $1.fields }
            if !dryRun {
                do {
                    try CassetteFile.write(redacted, to: CassetteInput.url(path), as: format)
                } catch {
                    throw CommandError(message: "cannot write \(path): \(error.message)")
                }
            }
            for change in changes {
                Console.out(change.heading)
                for line in change.lines { Console.out("  " + line) }
            }
            Console.out("")
            Console.out(
                "\(path): \(dryRun ? "would change" : "redacted") \(changedFields) field\(changedFields == 1 ? "" : "s") in "
                    + "\(changes.count) request\(changes.count == 1 ? "" : "s")"
                    + (dryRun ? " (dry run: nothing written)" : "")
            )
            return .changed(fields: changedFields, requests: changes.count)
        }
    }

    /// The configuration a recording would have used to keep these secrets off the cassette. The default
    /// secure headers and secret names are left out unless `secrets` asks for them: redact changes what it is told
    /// to change, nothing else.
    static func configuration(
        headers: [String],
        queries: [String],
        keys: [String],
        replacement: String?,
        secrets: Bool = false
    ) -> VCRConfiguration {
        var configuration = VCRConfiguration()
        configuration.secureHeaders = []
        configuration.filtersSecrets = secrets
        if !headers.isEmpty { configuration.headersFilter = .replacing(replacing(headers, with: replacement)) }
        if !queries.isEmpty { configuration.queryParametersFilter = .replacing(replacing(queries, with: replacement)) }
        if !keys.isEmpty {
            configuration.postBodyFilter = .replacing(replacing(keys, with: replacement))
            configuration.responseBodyFilter = .replacing(replacing(keys, with: replacement))
        }
        return configuration
    }

    /// Each name (repeats once) mapped to the replacement, as the `.replacing` filters take them.
    static func replacing(_ names: [String], with replacement: String?) -> [String: String?] {
        Dictionary(names.map { ($0, replacement) }, uniquingKeysWith: { first, _ in first })
    }
}

/// What differs between two versions of a tape, per request, for `redact`'s report. Old values are shortened
/// so that the report does not repeat the secrets it removes.
enum TapeDiff {
    struct RequestChange {
        var heading: String
        /// How many fields changed (a body is one field, however many of its lines changed).
        var fields: Int
        var lines: [String]
    }

    static func changes(from old: Tape, to new: Tape) -> [RequestChange] {
        let before = old.interactions
        let after = new.interactions
        var result: [RequestChange] = []
        for index in before.indices {
            let a = before[index]
            guard index < after.count else { break }
            let b = after[index]
            var lines: [String] = []
            compare(a.request, b.request, as: "request", into: &lines)
            for (hop, (x, y)) in zip(a.redirects, b.redirects).enumerated() {
                compare(x.response, y.response, as: "redirect \(hop + 1) response", into: &lines)
                compare(x.request, y.request, as: "redirect \(hop + 1) request", into: &lines)
            }
            if let x = a.response, let y = b.response {
                compare(x, y, as: "response", into: &lines)
            }
            body(a.body, b.body, as: "response body", into: &lines)
            let (oldChunks, newChunks) = (a.chunks.count, b.chunks.count)
            if oldChunks != newChunks {
                lines.append("response body chunks: \(oldChunks) → \(newChunks) (the shorter body needs fewer)")
            }
            if let x = a.error, let y = b.error {
                for key in Set(x.userInfo.keys).union(y.userInfo.keys).sorted() where x.userInfo[key] != y.userInfo[key] {
                    lines += field("error \(key)", x.userInfo[key], y.userInfo[key])
                }
            }
            let fields = lines.filter { !$0.hasPrefix("  ") }.count
            if !lines.isEmpty {
                result.append(RequestChange(
                    heading: "request \(index + 1) (\(b.request.method) \(Abbreviate.end(b.request.url, to: 100))):",
                    fields: fields,
                    lines: lines
                ))
            }
        }
        return result
    }

    private static func compare(_ x: RecordedRequest, _ y: RecordedRequest, as name: String, into lines: inout [String]) {
        if x.url != y.url { lines += field("\(name) URL", x.url, y.url) }
        headers(x.headers, y.headers, as: name, into: &lines)
        body(x.body ?? Data(), y.body ?? Data(), as: "\(name) body", into: &lines)
    }

    private static func compare(_ x: RecordedResponse, _ y: RecordedResponse, as name: String, into lines: inout [String]) {
        if x.url != y.url { lines += field("\(name) URL", x.url, y.url) }
        headers(x.headers, y.headers, as: name, into: &lines)
    }

    private static func headers(_ x: [RecordedHeader], _ y: [RecordedHeader], as name: String, into lines: inout [String]) {
        var names: [String] = []
        for header in x + y where !names.contains(where: { $0.equalsIgnoringASCIICase(header.name) }) {
            names.append(header.name)
        }
        for headerName in names where x[field: headerName] != y[field: headerName] {
            let clear = ["content-length", "content-encoding"].contains(headerName.lowercased())
            lines += field("\(name) header \(headerName)", x[field: headerName], y[field: headerName], clear: clear)
        }
    }

    /// `- old` / `+ new` lines for one field; the part of the old value that changed is shortened.
    private static func field(_ name: String, _ old: String?, _ new: String?, clear: Bool = false) -> [String] {
        switch (old, new) {
        case let (old?, new?):
            let (shownOld, shownNew) = inline(old, new, clear: clear)
            return ["\(name): \(shownOld) → \(shownNew)"]
        case let (old?, nil):
            return ["\(name): \(clear ? old : Abbreviate.secret(old)) → (removed)"]
        case let (nil, new?):
            return ["\(name): (none) → \(new)"]
        case (nil, nil):
            return []
        }
    }

    /// Changed lines of a text body, `-` old and `+` new, the changed part of old lines shortened; a count for
    /// binary bodies.
    private static func body(_ old: Data, _ new: Data, as name: String, into lines: inout [String]) {
        guard old != new else { return }
        guard let oldText = String(data: old, encoding: .utf8), let newText = String(data: new, encoding: .utf8) else {
            lines.append("\(name): \(old.count) bytes → \(new.count) bytes (binary)")
            return
        }
        lines.append("\(name):")
        let oldLines = oldText.components(separatedBy: "\n")
        let newLines = newText.components(separatedBy: "\n")
        if oldLines.count == newLines.count {
            for (number, (x, y)) in zip(oldLines, newLines).enumerated() where x != y {
                let (shownOld, shownNew) = inline(x, y, clear: false)
                lines.append("  line \(number + 1):")
                lines.append("  - \(shownOld)")
                lines.append("  + \(shownNew)")
            }
            return
        }
        // Lines were removed (--remove): show the block between the common head and tail.
        var head = 0
        while head < min(oldLines.count, newLines.count), oldLines[head] == newLines[head] { head += 1 }
        var tail = 0
        while tail < min(oldLines.count, newLines.count) - head,
              oldLines[oldLines.count - 1 - tail] == newLines[newLines.count - 1 - tail] {
            tail += 1
        }
        lines.append("  lines \(head + 1)–\(oldLines.count - tail):")
        for line in oldLines[head..<(oldLines.count - tail)] {
            lines.append("  - \(Abbreviate.end(line.isEmpty ? line : shorten(line), to: 160))")
        }
        for line in newLines[head..<(newLines.count - tail)] {
            lines.append("  + \(Abbreviate.end(line, to: 160))")
        }
    }

    /// The old and new text around the part that differs, with some context, the old part shortened.
    static func inline(_ old: String, _ new: String, clear: Bool) -> (String, String) {
        let a = Array(old)
        let b = Array(new)
        var prefix = 0
        while prefix < min(a.count, b.count), a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < min(a.count, b.count) - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            suffix += 1
        }
        // Widen the changed part to whole tokens, so that "hunter2" is not shown as "h" + "unter2".
        while prefix > 0, isTokenCharacter(a[prefix - 1]), isTokenCharacter(b[prefix - 1]) { prefix -= 1 }
        while suffix > 0, isTokenCharacter(a[a.count - suffix]), isTokenCharacter(b[b.count - suffix]) { suffix -= 1 }
        let context = 60
        let lead = String(a[..<prefix])
        let shownLead = lead.count > context ? "…" + lead.suffix(context) : lead
        let trail = String(a[(a.count - suffix)...])
        let shownTrail = trail.count > context ? trail.prefix(context) + "…" : trail
        let oldMiddle = String(a[prefix..<(a.count - suffix)])
        let newMiddle = Abbreviate.end(String(b[prefix..<(b.count - suffix)]), to: 200)
        let shownOld = clear || oldMiddle.isEmpty ? oldMiddle : shorten(oldMiddle)
        return (shownLead + shownOld + shownTrail, shownLead + newMiddle + shownTrail)
    }

    private static func shorten(_ secret: String) -> String {
        let quoted = Abbreviate.secret(secret)
        return String(quoted.dropFirst().dropLast())
    }

    private static func isTokenCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "-" || character == "_" || character == "."
            || character == "+" || character == "/" || character == "%"
    }
}
