import Foundation
import HTTPVCRCassettes

/// `vcr diff OLD NEW` and `vcr diff CASSETTE --against REV`: what changed between two versions of a cassette, as
/// requests that appeared or went and the shape of each response, rather than a wall of JSON.
enum DiffCommand {
    static var command: Command {
        Command(
            name: "diff",
            abstract: "Show how two cassettes' requests and response shapes differ (exit status 1 when they do).",
            usage: ["<old> <new> [--value <path> ...]", "<cassette> --against <revision> [--value <path> ...]"],
            arguments: [
                ("<old>", "The cassette before (a re-record, say): any format vcr reads."),
                ("<new>", "The cassette after."),
                ("<cassette>", "With --against: the cassette in the working tree, compared with its committed self."),
            ],
            options: [
                .value("against", "<revision>", "Compare <cassette> with its version at a git revision (HEAD, main)."),
                .repeated("value", "<path>", "Also compare the values at this JSON location ($.items[*].id)."),
            ],
            discussion: """
                Requests are paired by method and URL, in order. For each pair: the status, the Content-Type and, \
                for JSON bodies, the shape: keys added or removed and values whose type changed (number → string, \
                object → array, null → string), each at a JSONPath-like location where [*] stands for every \
                element of an array. Values are compared only at the locations given with --value. Requests only \
                in the newer cassette are listed as new, requests only in the older one as gone. These are the \
                differences a test run in verify mode (VCR_RECORD_MODE=verify) reports against the live service.

                Exit status: 0 when the cassettes do not differ, 1 when they do, 2 when a cassette cannot be read \
                (or git cannot give the revision's version).
                """,
            examples: [
                "vcr diff Cassettes/Login.json /tmp/Login.json",
                "vcr diff Cassettes.bundle/UserTests/profile.json --against HEAD",
                "vcr diff old.json new.json --value '$.user.role'",
            ],
            run: { arguments in Result { () throws(CommandError) in try run(arguments) } }
        )
    }

    static func run(_ arguments: ParsedArguments) throws(CommandError) -> ExitStatus {
        for path in arguments.values("value") where !JSONPathLocation.isValid(path) {
            throw CommandError.usage(
                "--value \(path): not a JSON location (write it as $.key, $.list[*].key, $.list[0] or $['a key'])",
                of: command
            )
        }
        let older: (name: String, tape: Tape)
        let newer: (name: String, tape: Tape)
        if let revision = arguments.value("against") {
            guard arguments.positionals.count == 1 else {
                throw CommandError.usage(
                    "--against takes one <cassette>, compared with its version at \(revision)", of: command
                )
            }
            let path = arguments.positionals[0]
            newer = (path, try CassetteInput.read(path).tape)
            older = ("\(revision):\(path)", try tape(of: path, at: revision))
        } else {
            guard arguments.positionals.count == 2 else {
                throw CommandError.usage(
                    arguments.positionals.count < 2 ? "missing <old> or <new>" : "too many cassettes (give two)",
                    of: command
                )
            }
            older = (arguments.positionals[0], try CassetteInput.read(arguments.positionals[0]).tape)
            newer = (arguments.positionals[1], try CassetteInput.read(arguments.positionals[1]).tape)
        }
        let drifts = CassetteDrift.between(older.tape, newer.tape, comparedValuePaths: arguments.values("value"))
        Console.out("--- \(older.name) (\(count(older.tape)))")
        Console.out("+++ \(newer.name) (\(count(newer.tape)))")
        Console.out(report(drifts))
        return drifts.isEmpty ? .success : .findings
    }

    /// The drifts as lines: `~` a changed request and its differences indented below it, `+` a new one, `-` one
    /// that went; then a summary line.
    static func report(_ drifts: [CassetteDrift]) -> String {
        var lines: [String] = []
        for drift in drifts {
            switch drift.kind {
            case .new: lines.append("+ \(drift.request) (new)")
            case .unused: lines.append("- \(drift.request) (gone)")
            default:
                lines.append("~ \(drift.request)")
                lines += drift.differences.map { "    \($0)" }
            }
        }
        let changed = drifts.filter { $0.kind == .changed }.count
        let new = drifts.filter { $0.kind == .new }.count
        let gone = drifts.filter { $0.kind == .unused }.count
        if drifts.isEmpty {
            lines.append("No differences in requests or response shapes.")
        } else {
            lines.append("")
            lines.append("\(changed) changed, \(new) new, \(gone) gone")
        }
        return lines.joined(separator: "\n")
    }

    private static func count(_ tape: Tape) -> String {
        let requests = tape.interactions.count
        return requests == 1 ? "1 request" : "\(requests) requests"
    }

    /// The cassette at `path` as committed at `revision`: `git show REV:./NAME`, run in the file's folder.
    private static func tape(of path: String, at revision: String) throws(CommandError) -> Tape {
        let url = CassetteInput.url(path).standardizedFileURL
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", url.deletingLastPathComponent().path, "show",
                             "\(revision):./\(url.lastPathComponent)"]
        let output = Pipe()
        process.standardOutput = output
        // git's complaints go to a file, read once it has exited: a second pipe would need a reader of its own
        // beside this one, so that a large cassette cannot fill one pipe and stall git.
        let errorFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("vcr-diff-\(ProcessInfo.processInfo.globallyUniqueString).stderr")
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let data: Data
        let errorText: String
        do {
            guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown)
            }
            let errors = try FileHandle(forWritingTo: errorFile)
            defer { try? errors.close() }
            process.standardError = errors
            try process.run()
            data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            errorText = String(decoding: (try? Data(contentsOf: errorFile)) ?? Data(), as: UTF8.self)
        } catch {
            throw CommandError(message: "\(path): cannot run git (\(error.localizedDescription))")
        }
        guard process.terminationStatus == 0 else {
            let reason = errorText.trimmingCharacters(in: .whitespacesAndNewlines)
            throw CommandError(message: "\(path): git cannot give its version at \(revision): \(reason)")
        }
        do {
            return try CassetteFile.decode(data, path: "\(revision):\(path)").tape
        } catch {
            throw CommandError(message: "\(revision):\(path): \(CassetteInput.reason(error))")
        }
    }
}
