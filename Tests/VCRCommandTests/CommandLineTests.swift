import Foundation
import HTTPVCR
import Testing

/// The parts every subcommand shares: help, version, usage errors and exit statuses.
@Suite struct CommandLineTests {
    @Test func executableIsBuilt() throws {
        let executable = try #require(VCRTool.executable, "the vcr executable is next to the test bundle")
        #expect(FileManager.default.isExecutableFile(atPath: executable.path))
    }

    @Test(arguments: [["help"], ["--help"], ["-h"]])
    func overview(_ arguments: [String]) throws {
        let result = try VCRTool.run(arguments)
        #expect(result.status == 0, "\(result)")
        for name in ["show", "lint", "convert", "redact", "USAGE: vcr <subcommand>", "EXIT STATUS"] {
            #expect(result.stdout.contains(name), "\(name) in \(result)")
        }
    }

    @Test(arguments: ["show", "lint", "convert", "redact"])
    func helpOnEverySubcommand(_ name: String) throws {
        for arguments in [[name, "--help"], [name, "-h"], ["help", name], [name, "some-file.json", "--help"]] {
            let result = try VCRTool.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result)")
            #expect(result.stdout.contains("USAGE: vcr \(name) "), "\(arguments): \(result)")
            #expect(result.stdout.contains("OPTIONS:"), "\(arguments): \(result)")
            #expect(result.stdout.contains("-h, --help"), "\(arguments): \(result)")
            #expect(result.stderr.isEmpty, "\(arguments): \(result)")
        }
    }

    @Test func version() throws {
        let result = try VCRTool.run("--version")
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("vcr "))
    }

    @Test func noArgumentsShowsTheOverviewAndFails() throws {
        let result = try VCRTool.run([])
        #expect(result.status == 2)
        #expect(result.stderr.contains("USAGE: vcr <subcommand>"))
    }

    @Test func unknownSubcommandSuggestsTheClosest() throws {
        let result = try VCRTool.run("shwo", "x.json")
        #expect(result.status == 2)
        #expect(result.stderr.contains("error: unknown subcommand 'shwo' (did you mean 'show'?)"), "\(result)")
        let help = try VCRTool.run("help", "lnt")
        #expect(help.status == 2)
        #expect(help.stderr.contains("did you mean 'lint'?"), "\(help)")
    }

    @Test(arguments: ["show", "lint", "convert", "redact"])
    func unknownOptionShowsTheUsage(_ name: String) throws {
        let result = try VCRTool.run(name, "--frobnicate", "x.json")
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.hasPrefix("error: unknown option '--frobnicate'"), "\(result)")
        #expect(result.stderr.contains("USAGE: vcr \(name) "), "\(result)")
        #expect(result.stderr.contains("See 'vcr \(name) --help'"), "\(result)")
        #expect(result.stdout.isEmpty)
    }

    @Test func misspelledOptionGetsASuggestion() throws {
        let result = try VCRTool.run("redact", "x.json", "--heder", "Cookie")
        #expect(result.status == 2)
        #expect(result.stderr.contains("unknown option '--heder' (did you mean '--header'?)"), "\(result)")
    }

    @Test func missingArgumentsAndValues() throws {
        let show = try VCRTool.run("show")
        #expect(show.status == 2)
        #expect(show.stderr.contains("error: missing <cassette>"), "\(show)")
        #expect(show.stderr.contains("USAGE: vcr show"), "\(show)")

        let convert = try VCRTool.run("convert", "a.json")
        #expect(convert.status == 2)
        #expect(convert.stderr.contains("error: missing <output>"), "\(convert)")

        let value = try VCRTool.run("redact", "x.json", "--header")
        #expect(value.status == 2)
        #expect(value.stderr.contains("error: missing value for '--header <name>'"), "\(value)")

        let extra = try VCRTool.run("show", "a.json", "b.json")
        #expect(extra.status == 2)
        #expect(extra.stderr.contains("unexpected argument 'b.json'"), "\(extra)")

        let flagValue = try VCRTool.run("show", "a.json", "--json=yes")
        #expect(flagValue.status == 2)
        #expect(flagValue.stderr.contains("'--json' does not take a value"), "\(flagValue)")
    }

    @Test func optionsTakeValuesBothWaysAndDoubleDashEndsThem() throws {
        let folder = try TemporaryFolder()
        let tape = Tapes.tape(Tapes.exchange(requestHeaders: [RecordedHeader("X-Api-Key", "key-1234567")]))
        let path = try folder.write(tape, "-odd name.json")

        // `--` lets a file start with a dash.
        let show = try VCRTool.run("show", "--", path.replacingOccurrences(of: folder.url.path + "/", with: ""), in: folder.url)
        #expect(show.status == 0, "\(show)")
        #expect(show.stdout.contains("https://api.example.com/v1/items"))

        // `--header=NAME` and `--header NAME` are the same.
        let equals = try VCRTool.run("redact", path, "--header=X-Api-Key", "--dry-run")
        let spaced = try VCRTool.run("redact", path, "--header", "X-Api-Key", "--dry-run")
        #expect(equals.status == 0, "\(equals)")
        #expect(equals.stdout == spaced.stdout)
        #expect(equals.stdout.contains("request header X-Api-Key"))
    }

    @Test func missingFileIsExitStatusTwo() throws {
        for arguments in [["show", "nope.json"], ["lint", "nope.json"], ["convert", "nope.json", "out.json"],
                          ["redact", "nope.json", "--header", "Cookie"]] {
            let folder = try TemporaryFolder()
            let result = try VCRTool.run(arguments, in: folder.url)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect((result.stdout + result.stderr).contains("nope.json"), "\(arguments): \(result)")
            #expect((result.stdout + result.stderr).contains("no such file"), "\(arguments): \(result)")
        }
    }

    /// Malformed and empty inputs: exit status 2 and a message naming the file, never a crash.
    @Test(arguments: [
        ("empty.json", ""),
        ("truncated.json", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1, "#),
        ("garbage.json", "\u{1}\u{2}not json at all"),
        ("wrong-types.json", #"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": "one", "complete": true}]}"#),
        ("unknown-version.json", #"{"format": "HTTPVCR", "version": 99, "scenes": []}"#),
        ("not-a-cassette.json", #"{"name": "package.json", "dependencies": {}}"#),
        ("bad-har.har", #"{"log": {"entries": [{"request": {}}]}}"#),
        ("bad-plist.plist", "<?xml version=\"1.0\"?><plist><dict><key>format</key>"),
        ("scalar.json", "42"),
    ])
    func malformedInputs(_ name: String, _ content: String) throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(content, name)
        let output = folder.file("out.json").path
        for arguments in [["show", path], ["show", path, "--json"], ["lint", path], ["convert", path, output],
                          ["redact", path, "--header", "Cookie"]] {
            let result = try VCRTool.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect((result.stdout + result.stderr).contains(path), "\(arguments): \(result)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    @Test func folderWhereAFileIsExpected() throws {
        let folder = try TemporaryFolder()
        let result = try VCRTool.run("show", folder.url.path)
        #expect(result.status == 2)
        #expect(result.stderr.contains("is a folder"), "\(result)")
    }
}
