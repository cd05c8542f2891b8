import Foundation
import HTTPVCRCassettes

/// `vcr redact PATH... --header NAME --query NAME --json-key NAME --secrets`: hides secrets in recorded cassettes
/// with the filters recording uses. Those filters are the runtime's (they work on live requests), so the command is
/// handed them as a ``Redactor``: everything else it does (options, files, the report) needs the cassettes alone.
package enum RedactCommand {
    /// The command, redacting with `redact`.
    package static func command(redacting redact: @escaping Redactor) -> Command {
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
                    "What secrets are replaced with (default: \(SecretNames.filteredPlaceholder))."
                ),
                .flag(
                    "secrets",
                    "Also hide every name recording hides by default (the names vcr lint reports), and their "
                        + "echoes, with \(SecretNames.filteredPlaceholder) as recording writes them."
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
                It always writes \(SecretNames.filteredPlaceholder); --placeholder and --remove apply to the \
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
            run: { arguments in Result { () throws(CommandError) in try run(arguments, redacting: redact) } }
        )
    }

    package static func run(
        _ arguments: ParsedArguments, redacting redact: @escaping Redactor
    ) throws(CommandError) -> ExitStatus {
        let command = Self.command(redacting: redact)
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
                    + "--secrets always writes \(SecretNames.filteredPlaceholder), as recording does",
                of: command
            )
        }
        let replacement: String? = arguments.flag("remove")
            ? nil
            : arguments.value("placeholder") ?? SecretNames.filteredPlaceholder
        let redaction = Redaction(
            request: RedactionRequest(
                headers: headers, queries: queries, keys: keys, replacement: replacement, secrets: secrets,
                responseHeaders: replacing(headers, with: replacement)
            ),
            redact: redact,
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
        package let request: RedactionRequest
        let redact: Redactor
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
            let redacted = redact(tape, request)
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

    /// Each name (repeats once) mapped to the replacement, as the `.replacing` filters take them.
    package static func replacing(_ names: [String], with replacement: String?) -> [String: String?] {
        Dictionary(names.map { ($0, replacement) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Redacts a tape as asked, with the filters recording uses (HTTPVCR's `Tape.redacted(with:responseHeaders:)`).
package typealias Redactor = (Tape, RedactionRequest) -> Tape

/// What `vcr redact` was asked to hide, for the ``Redactor`` to turn into the filters a recording would have used.
package struct RedactionRequest: Sendable {
    /// Header names whose values are replaced (`--header`), in requests; in responses through ``responseHeaders``.
    package var headers: [String]
    /// Query parameters whose values are replaced in every URL (`--query`).
    package var queries: [String]
    /// JSON keys and form fields whose values are replaced in request and response bodies (`--json-key`).
    package var keys: [String]
    /// What the named values become; nil removes them (`--remove`).
    package var replacement: String?
    /// Also every name recording hides by default, and its echoes (`--secrets`).
    package var secrets: Bool
    /// Response header fields set to a value, or removed when it is nil: recording never filters response headers.
    package var responseHeaders: [String: String?]

    /// A request for these names.
    package init(
        headers: [String], queries: [String], keys: [String], replacement: String?, secrets: Bool,
        responseHeaders: [String: String?]
    ) {
        self.headers = headers
        self.queries = queries
        self.keys = keys
        self.replacement = replacement
        self.secrets = secrets
        self.responseHeaders = responseHeaders
    }
}
