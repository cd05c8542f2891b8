import Foundation
import HTTPVCRCassettes

/// `vcr convert IN OUT`: between HTTPVCR JSON, HTTPVCR plist and HAR, and from YAHTTPVCR and VCR.py.
enum ConvertCommand {
    static var command: Command {
        Command(
            name: "convert",
            abstract: "Convert a cassette to HTTPVCR JSON, HTTPVCR plist or HAR.",
            usage: ["<input> <output> [--format <format>] [--force]"],
            arguments: [
                ("<input>", "A cassette in any format vcr reads (HTTPVCR JSON or plist, HAR, YAHTTPVCR, VCR.py)."),
                ("<output>", "The file to write: .json is HTTPVCR JSON, .plist an HTTPVCR property list, .har HAR."),
            ],
            options: [
                .value("format", "<format>", "Write this format whatever the extension: json, plist or har."),
                .flag("force", short: "f", "Allow <output> to be <input> (rewrites it in place)."),
            ],
            discussion: """
                HTTPVCR JSON and plist hold everything a cassette can say; converting between them, and from \
                YAHTTPVCR, VCR.py or HAR to them, loses nothing. HAR cannot hold everything: it has no chunk \
                boundaries, no interleaving of concurrent requests and no response URLs, and lists redirect hops \
                as entries of their own. What a conversion to HAR loses is said on stderr, one "note:" line per \
                problem; the conversion still succeeds. The output is written atomically.
                """,
            examples: [
                "vcr convert Tests/Fixtures/vcrpy/httpbin-basics.json httpbin-basics.json",
                "vcr convert Tests/Cassettes/login.json login.har   # to open in a browser's network panel",
                "vcr convert old.plist old.json",
            ],
            run: { arguments in Result { () throws(CommandError) in try run(arguments) } }
        )
    }

    static func run(_ arguments: ParsedArguments) throws(CommandError) -> ExitStatus {
        let positionals = arguments.positionals
        guard positionals.count >= 2 else {
            throw CommandError.usage(positionals.isEmpty ? "missing <input> and <output>" : "missing <output>", of: command)
        }
        guard positionals.count == 2 else {
            throw CommandError.usage("unexpected argument '\(positionals[2])'", of: command)
        }
        let (input, output) = (positionals[0], positionals[1])
        let format = try outputFormat(output, option: arguments.value("format"))

        if CassetteInput.sameFile(input, output), !arguments.flag("force") {
            throw CommandError(message: "\(output) is the input file; pass --force to rewrite it in place")
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: output, isDirectory: &isFolder), isFolder.boolValue {
            throw CommandError(message: "\(output): is a folder; name the file to write")
        }
        let (tape, inputFormat) = try CassetteInput.read(input)

        for note in CassetteFile.lossNotes(tape, writingAs: format) {
            Console.error("note: \(note)")
        }
        do {
            try CassetteFile.write(tape, to: CassetteInput.url(output), as: format)
        } catch {
            throw CommandError(message: "cannot write \(output): \(error.message)")
        }
        let count = tape.interactions.count
        Console.out(
            "Converted \(input) (\(CassetteInput.describe(inputFormat)), \(count) request\(count == 1 ? "" : "s")) "
                + "to \(output) (\(CassetteInput.describe(format)))"
        )
        return .success
    }

    static func outputFormat(_ output: String, option: String?) throws(CommandError) -> CassetteFormat {
        if let option {
            switch option.lowercased() {
            case "json": return .json
            case "plist": return .plist
            case "har": return .har
            default:
                throw CommandError.usage(
                    "unknown format '\(option)' for '--format' (vcr writes json, plist and har)",
                    of: command
                )
            }
        }
        switch CassetteInput.url(output).pathExtension.lowercased() {
        case "json": return .json
        case "plist": return .plist
        case "har": return .har
        case "":
            throw CommandError.usage(
                "cannot tell the format to write from '\(output)': give it a .json, .plist or .har extension, "
                    + "or pass --format",
                of: command
            )
        case let other:
            throw CommandError.usage(
                "vcr does not write .\(other) files: use .json (HTTPVCR JSON), .plist (HTTPVCR property list) "
                    + "or .har (HAR), or pass --format",
                of: command
            )
        }
    }
}
