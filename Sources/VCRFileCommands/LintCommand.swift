import Foundation
import HTTPVCRCassettes

/// `vcr lint PATH...`: secrets in clear in cassettes, for CI and pre-commit hooks.
enum LintCommand {
    /// The extensions looked at inside folders. Files named on the command line are linted whatever their name.
    static let cassetteExtensions: Set<String> = ["json", "plist", "har"]

    static var command: Command {
        Command(
            name: "lint",
            abstract: "Find secrets left in clear in cassettes (exit status 1 when there are any).",
            usage: ["<path> ... [--placeholder <text> ...] [--quiet]"],
            arguments: [
                ("<path>", "Cassette files, and folders searched recursively for .json, .plist and .har files."),
            ],
            options: [
                .repeated("placeholder", "<text>", "Also accept this value as a filtered secret (repeatable)."),
                .flag("quiet", short: "q", "Print findings only, without the summary on stderr."),
            ],
            discussion: """
                Reports each finding as "<file>: request <N>: <where>: <what>", where N counts requests as \
                'vcr show' does. Looked for: Authorization, Proxy-Authorization, Cookie, Set-Cookie and \
                API-key-like headers (X-Api-Key, X-Auth-Token, ...) in clear; query parameters, form fields and \
                JSON keys (at any depth) named like token, secret, password, api_key, access_token, \
                client_secret; bearer tokens, JWTs, AWS access key IDs, private key blocks, GitHub, Slack, \
                Stripe and Google API keys, and some fifty more vendors' keys with a fixed prefix (SendGrid, \
                GitLab, OpenAI, npm, ...: Docs/Filters.md lists them) in any header, URL or body. Bodies are \
                read decompressed, and base64 bodies decoded.

                Values written by filters are not findings: [FILTERED] (HTTPVCR's), <filtered>, REDACTED, \
                [REDACTED], ***, xxxx and the like, and any --placeholder.

                Files that cannot be read as cassettes are reported as "<file>: error: <reason>". Exit status: \
                0 when nothing was found, 1 when secrets were found, 2 when a file could not be read (or a path \
                does not exist).
                """,
            examples: [
                "vcr lint Cassettes.bundle",
                "vcr lint $(git diff --cached --name-only -- '*.json')   # in a pre-commit hook",
                "vcr lint Tests/Cassettes --placeholder '<scrubbed>'",
            ],
            run: { arguments in Result { () throws(CommandError) in try run(arguments) } }
        )
    }

    static func run(_ arguments: ParsedArguments) throws(CommandError) -> ExitStatus {
        guard !arguments.positionals.isEmpty else {
            throw CommandError.usage("missing <path>", of: command)
        }
        let scanner = SecretScanner(extraPlaceholders: Set(arguments.values("placeholder")))
        var files: [String] = []
        var unreadable = 0
        var missing = 0
        for path in arguments.positionals {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                Console.out("\(path): error: no such file or folder")
                unreadable += 1
                missing += 1
                continue
            }
            files += isFolder.boolValue ? cassettes(in: path) : [path]
        }

        var findings = 0
        var filesWithFindings = 0
        for file in files {
            let tape: Tape
            do {
                tape = try CassetteFile.read(at: CassetteInput.url(file)).tape
            } catch {
                Console.out("\(file): error: \(CassetteInput.reason(error))")
                unreadable += 1
                continue
            }
            let found = scanner.scan(tape)
            for finding in found { Console.out("\(file): \(finding)") }
            findings += found.count
            if !found.isEmpty { filesWithFindings += 1 }
        }

        if !arguments.flag("quiet") {
            let readable = files.count - (unreadable - missing)
            let scanned = readable == 1 ? "1 file" : "\(readable) files"
            var summary = findings == 0
                ? "vcr lint: no secrets found in \(scanned)"
                : "vcr lint: \(findings) finding\(findings == 1 ? "" : "s") in \(filesWithFindings) of \(scanned)"
            if unreadable > 0 { summary += "; \(unreadable) could not be read" }
            if files.isEmpty && unreadable == 0 { summary = "vcr lint: no cassette files (.json, .plist, .har) found" }
            Console.error(summary)
        }
        if unreadable > 0 { return .failure }
        return findings > 0 ? .findings : .success
    }

    /// Cassette files under `folder`, sorted, hidden files and folders (`.build`, `.git`) skipped.
    static func cassettes(in folder: String) -> [String] {
        let root = CassetteInput.url(folder)
        guard let enumerator = FileManager.default.enumerator(
            at: root,
            includingPropertiesForKeys: [.isRegularFileKey],
            options: [.skipsHiddenFiles]
        ) else { return [] }
        var files: [String] = []
        let base = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        let rootPath = root.standardizedFileURL.path
        for case let url as URL in enumerator {
            guard cassetteExtensions.contains(url.pathExtension.lowercased()),
                  (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
            else { continue }
            // Show paths the way the user named the folder: `Cassettes.bundle/Examples/x.json`.
            let full = url.standardizedFileURL.path
            let relative = full.hasPrefix(rootPath + "/") ? String(full.dropFirst(rootPath.count + 1)) : full
            files.append(full.hasPrefix(rootPath + "/") ? "\(base)/\(relative)" : full)
        }
        return files.sorted()
    }
}
