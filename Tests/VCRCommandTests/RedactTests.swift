import Foundation
import HTTPVCR
import Testing
import TestSupport

@Suite struct RedactTests {
    /// A cassette with one secret in each place redact reaches.
    static var leaky: Tape {
        let login = Tapes.exchange(
            chapter: 1,
            method: "POST",
            url: "https://api.example.com/v1/login?q=vcr&api_key=qk-778899",
            requestHeaders: [
                RecordedHeader("Accept", "application/json"),
                RecordedHeader("Content-Type", "application/json"),
                RecordedHeader("X-Api-Key", "sk-live-abcdef123456"),
            ],
            requestBody: #"{"user":"ada","password":"pw-secret-1"}"#,
            responseHeaders: [
                RecordedHeader("Content-Type", "application/json"),
                RecordedHeader("Set-Cookie", "sid=ck-secret-3; Path=/"),
            ],
            chunks: [#"{"ok":true,"session":{"token":"rt-secret-2"}}"#]
        )
        let failure = Interaction(
            chapter: 2,
            request: RecordedRequest(method: "GET", url: "https://api.example.com/v1/slow?api_key=qk-778899"),
            response: nil,
            error: RecordedError(
                domain: NSURLErrorDomain,
                code: -1001,
                userInfo: [
                    NSLocalizedDescriptionKey: "The request timed out.",
                    "NSErrorFailingURLStringKey": "https://api.example.com/v1/slow?api_key=qk-778899",
                ]
            ),
            timeToFirstByte: 1,
            duration: 1
        )
        return Tape(interactions: [login, failure])
    }

    static let secrets = ["sk-live-abcdef123456", "qk-778899", "pw-secret-1", "rt-secret-2", "ck-secret-3"]
    static let options = [
        "--header", "X-Api-Key", "--header", "set-cookie", "--query", "api_key",
        "--json-key", "password", "--json-key", "token",
    ]

    @Test func secretsGoAndEverythingElseStaysByteForByte() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.leaky, "leaky.json")
        let original = try String(contentsOfFile: path, encoding: .utf8)
        #expect(try VCRTool.run("lint", path).status == 1)

        let result = try VCRTool.run(["redact", path] + Self.options)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("redacted 8 fields in 2 requests"), "\(result)")

        let redacted = try String(contentsOfFile: path, encoding: .utf8)
        for secret in Self.secrets {
            #expect(!redacted.contains(secret), "\(secret) is gone")
            #expect(!result.stdout.contains(secret), "the report does not repeat \(secret)")
        }
        #expect(redacted.contains("[FILTERED]"))
        // Exactly the secrets changed: the same bytes with the placeholder in their place.
        let expected = original
            .replacingOccurrences(of: "sid=ck-secret-3; Path=/", with: "[FILTERED]")
            .replacingOccurrences(of: "qk-778899", with: "%5BFILTERED%5D")
            .replacingOccurrences(of: "sk-live-abcdef123456", with: "[FILTERED]")
            .replacingOccurrences(of: "pw-secret-1", with: "[FILTERED]")
            .replacingOccurrences(of: "rt-secret-2", with: "[FILTERED]")
        #expect(redacted == expected)

        let lint = try VCRTool.run("lint", path)
        #expect(lint.status == 0, "\(lint)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["leaky.json"])
    }

    @Test func dryRunShowsTheChangesAndWritesNothing() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.leaky, "leaky.json")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try VCRTool.run(["redact", path, "--dry-run"] + Self.options)
        #expect(result.status == 0, "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        for secret in Self.secrets { #expect(!result.stdout.contains(secret), "\(secret) in \(result)") }
        let lines = result.lines
        #expect(lines.first == "request 1 (POST https://api.example.com/v1/login?q=vcr&api_key=%5BFILTERED%5D):")
        #expect(lines.contains("  request header X-Api-Key: sk-l… → [FILTERED]"), "\(result)")
        #expect(lines.contains("  response header Set-Cookie: sid=… → [FILTERED]"), "\(result)")
        #expect(lines.contains { $0.contains("request URL: ") && $0.contains("api_key=qk-7…") }, "\(result)")
        #expect(lines.contains { $0.hasPrefix("    + ") && $0.contains(#""password":"[FILTERED]""#) }, "\(result)")
        #expect(lines.contains("request 2 (GET https://api.example.com/v1/slow?api_key=%5BFILTERED%5D):"), "\(result)")
        #expect(lines.contains { $0.hasPrefix("  error NSErrorFailingURLStringKey: ") }, "\(result)")
        #expect(lines.last == "\(path): would change 8 fields in 2 requests (dry run: nothing written)")

        // -n is --dry-run.
        let short = try VCRTool.run(["redact", path, "-n"] + Self.options)
        #expect(short.stdout == result.stdout)
    }

    @Test func placeholderAndRemove() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.leaky, "leaky.json")
        let custom = try VCRTool.run(["redact", path, "--placeholder", "<secret>"] + Self.options)
        #expect(custom.status == 0, "\(custom)")
        let tape = try CassetteFile.read(at: URL(fileURLWithPath: path)).tape
        let login = try #require(tape.interactions.first)
        #expect(login.request.headers[field: "X-Api-Key"] == "<secret>")
        #expect(login.request.url == "https://api.example.com/v1/login?q=vcr&api_key=%3Csecret%3E")
        #expect(login.request.body == Data(#"{"user":"ada","password":"<secret>"}"#.utf8))
        #expect(login.body == Data(#"{"ok":true,"session":{"token":"<secret>"}}"#.utf8))
        #expect(try VCRTool.run("lint", path).status == 0)

        let removePath = try folder.write(Self.leaky, "remove.json")
        let remove = try VCRTool.run(["redact", removePath, "--remove"] + Self.options)
        #expect(remove.status == 0, "\(remove)")
        let removed = try #require(try CassetteFile.read(at: URL(fileURLWithPath: removePath)).tape.interactions.first)
        #expect(removed.request.headers.map(\.name) == ["Accept", "Content-Type"])
        #expect(removed.request.url == "https://api.example.com/v1/login?q=vcr")
        #expect(removed.request.body == Data(#"{"user":"ada"}"#.utf8))
        #expect(removed.response?.headers[field: "Set-Cookie"] == nil)
        #expect(removed.body == Data(#"{"ok":true,"session":{}}"#.utf8))

        let both = try VCRTool.run(["redact", removePath, "--remove", "--placeholder", "x", "--header", "A"])
        #expect(both.status == 2)
    }

    @Test func formBodiesAndContentLength() throws {
        let folder = try TemporaryFolder()
        let tape = Tapes.tape(Tapes.exchange(
            method: "POST",
            requestHeaders: [
                RecordedHeader("Content-Length", "25"),
                RecordedHeader("Content-Type", "application/x-www-form-urlencoded"),
            ],
            requestBody: "user=bob&password=hunter2",
            responseHeaders: [RecordedHeader("Content-Length", "24"), RecordedHeader("Content-Type", "application/json")],
            chunks: [#"{"form":{"password":"hunter2"}}"#]
        ))
        let path = try folder.write(tape, "form.json")
        let result = try VCRTool.run("redact", path, "--form-key", "password")
        #expect(result.status == 0, "\(result)")
        let redacted = try #require(try CassetteFile.read(at: URL(fileURLWithPath: path)).tape.interactions.first)
        #expect(redacted.request.body == Data("user=bob&password=%5BFILTERED%5D".utf8))
        #expect(redacted.request.headers[field: "Content-Length"] == "32")
        #expect(redacted.body == Data(#"{"form":{"password":"[FILTERED]"}}"#.utf8))
        #expect(redacted.response?.headers[field: "Content-Length"] == String(redacted.body.count))
    }

    @Test func chunkedAndCompressedBodies() throws {
        let folder = try TemporaryFolder()
        let chunked = Tapes.exchange(chapter: 1, chunks: [#"{"tok"#, #"en":"abc123","#, #""x":1}"#])
        let gzipped = Interaction(
            chapter: 2,
            request: RecordedRequest(method: "GET", url: "https://api.example.com/gz"),
            response: RecordedResponse(
                url: "https://api.example.com/gz",
                statusCode: 200,
                headers: [
                    RecordedHeader("Content-Encoding", "gzip"),
                    RecordedHeader("Content-Length", "99"),
                    RecordedHeader("Content-Type", "application/json"),
                ]
            ),
            chunks: [Deflate.gzip(Data(#"{"token":"gz-secret"}"#.utf8))]
        )
        let untouched = Interaction(
            chapter: 3,
            request: RecordedRequest(method: "GET", url: "https://api.example.com/gz2"),
            response: RecordedResponse(
                url: "https://api.example.com/gz2",
                statusCode: 200,
                headers: [RecordedHeader("Content-Encoding", "gzip"), RecordedHeader("Content-Type", "application/json")]
            ),
            chunks: [Deflate.gzip(Data(#"{"name":"plain"}"#.utf8))]
        )
        let tape = Tape(interactions: [chunked, gzipped, untouched])
        let path = try folder.write(tape, "bodies.json")
        #expect(try VCRTool.run("lint", path).status == 1)

        let result = try VCRTool.run("redact", path, "--json-key", "token")
        #expect(result.status == 0, "\(result)")
        let redacted = try CassetteFile.read(at: URL(fileURLWithPath: path)).tape.interactions
        #expect(redacted[0].body == Data(#"{"token":"[FILTERED]","x":1}"#.utf8))
        #expect(redacted[0].chunks.map(\.count) == [5, 13, 10], "the chunk boundaries are kept")
        #expect(redacted[1].body == Data(#"{"token":"[FILTERED]"}"#.utf8))
        #expect(redacted[1].response?.headers[field: "Content-Encoding"] == nil)
        #expect(redacted[1].response?.headers[field: "Content-Length"] == String(redacted[1].body.count))
        #expect(redacted[2] == untouched, "a compressed body without the key stays compressed")
        #expect(try VCRTool.run("lint", path).status == 0)
    }

    @Test func redirectsAndPlist() throws {
        let folder = try TemporaryFolder()
        let tape = Tape(interactions: [Interaction(
            chapter: 1,
            request: RecordedRequest(method: "GET", url: "https://auth.example.com/start?token=t-1"),
            redirects: [Interaction.Redirect(
                response: RecordedResponse(
                    url: "https://auth.example.com/start?token=t-1",
                    statusCode: 302,
                    headers: [
                        RecordedHeader("Location", "https://app.example.com/cb?token=t-2&state=s"),
                        RecordedHeader("Set-Cookie", "auth=c-1"),
                    ]
                ),
                request: RecordedRequest(
                    method: "GET",
                    url: "https://app.example.com/cb?token=t-2&state=s",
                    headers: [RecordedHeader("Cookie", "auth=c-1")]
                )
            )],
            response: RecordedResponse(url: "https://app.example.com/cb?token=t-2&state=s", statusCode: 200),
            chunks: [Data("done".utf8)]
        )])
        let path = try folder.write(tape, "redirect.plist", as: .plist)
        let result = try VCRTool.run("redact", path, "--query", "token", "--header", "Cookie", "--header", "Set-Cookie")
        #expect(result.status == 0, "\(result)")
        let (redacted, format) = try CassetteFile.read(at: URL(fileURLWithPath: path))
        #expect(format == .plist)
        let interaction = try #require(redacted.interactions.first)
        let hop = try #require(interaction.redirects.first)
        #expect(interaction.request.url == "https://auth.example.com/start?token=%5BFILTERED%5D")
        #expect(hop.response.url == "https://auth.example.com/start?token=%5BFILTERED%5D")
        #expect(hop.response.headers[field: "Location"] == "https://app.example.com/cb?token=%5BFILTERED%5D&state=s")
        #expect(hop.response.headers[field: "Set-Cookie"] == "[FILTERED]")
        #expect(hop.request.url == "https://app.example.com/cb?token=%5BFILTERED%5D&state=s")
        #expect(hop.request.headers[field: "Cookie"] == "[FILTERED]")
        #expect(interaction.response?.url == "https://app.example.com/cb?token=%5BFILTERED%5D&state=s")
        #expect(try VCRTool.run("lint", path).status == 0)
    }

    @Test func foldersAreSearchedAndForeignCassettesInThemSkipped() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.file("Suite/Nested"), withIntermediateDirectories: true)
        let first = try folder.write(Self.leaky, "Suite/first.json")
        let second = try folder.write(Self.leaky, "Suite/Nested/second.plist", as: .plist)
        let har = try folder.write(Self.leaky, "Suite/other.har", as: .har)
        let vcrpy = try folder.copy(VCRTool.vcrPyFixture, as: "Suite/Nested/vcrpy.json")
        let foreign = [har, vcrpy]
        let foreignBefore = try foreign.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let before = try [first, second].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let suite = folder.file("Suite").path

        let dryRun = try VCRTool.run(["redact", suite, "--dry-run"] + Self.options)
        #expect(dryRun.status == 0, "\(dryRun)")
        let nothingWritten = "(dry run: nothing written)"
        #expect(
            dryRun.lines.last == "vcr redact: would change 16 fields in 4 requests across 2 of 4 cassettes \(nothingWritten)",
            "\(dryRun)"
        )
        for path in [first, second] {
            #expect(dryRun.lines.contains("\(path): would change 8 fields in 2 requests \(nothingWritten)"), "\(dryRun)")
        }
        let after = try [first, second].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        #expect(after == before, "dry run writes nothing")

        let result = try VCRTool.run(["redact", suite] + Self.options)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(
            result.lines.last == "vcr redact: redacted 16 fields in 4 requests across 2 of 4 cassettes", "\(result)"
        )
        #expect(result.lines.contains("\(first): redacted 8 fields in 2 requests"), "\(result)")
        #expect(result.lines.contains("\(second): redacted 8 fields in 2 requests"), "the nested folder too: \(result)")
        // Each foreign cassette: one line, a note and not an error, and the file left alone.
        for output in [dryRun, result] {
            let harLines = output.lines.filter { $0.contains("other.har") }
            let vcrpyLines = output.lines.filter { $0.contains("vcrpy.json") }
            #expect(harLines == ["\(har): skipped: a HAR cassette (convert it first)"], "\(output)")
            #expect(vcrpyLines == ["\(vcrpy): skipped: a VCR.py cassette (convert it first)"], "\(output)")
            #expect(!output.stdout.contains(": error: "), "\(output)")
        }
        #expect(try foreign.map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == foreignBefore)
        for path in [first, second] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for secret in Self.secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in \(path)") }
        }
        #expect(try VCRTool.run("lint", first, second).status == 0)

        // Run again: nothing left to redact, and still a success.
        let again = try VCRTool.run(["redact", suite] + Self.options)
        #expect(again.status == 0, "\(again)")
        #expect(again.lines.contains("\(first): nothing to redact"), "\(again)")
        #expect(again.lines.last == "vcr redact: redacted 0 fields in 0 requests across 0 of 4 cassettes", "\(again)")
    }

    @Test func aTotalLineOnlyWhenThereIsMoreThanOneFile() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.file("One"), withIntermediateDirectories: true)
        let only = try folder.write(Self.leaky, "One/only.json")
        let alone = try VCRTool.run(["redact", folder.file("One").path] + Self.options)
        #expect(alone.status == 0, "\(alone)")
        #expect(alone.lines.last == "\(only): redacted 8 fields in 2 requests", "one file found, no total: \(alone)")
        #expect(!alone.stdout.contains("vcr redact:"), "\(alone)")

        // Two files named: a total line.
        let a = try folder.write(Self.leaky, "a.json")
        let b = try folder.write(Self.leaky, "b.json")
        let two = try VCRTool.run(["redact", a, b] + Self.options)
        #expect(two.status == 0, "\(two)")
        #expect(two.lines.last == "vcr redact: redacted 16 fields in 4 requests across 2 of 2 cassettes", "\(two)")

        // The same file named twice, or named and found in a folder, is redacted once.
        let c = try folder.write(Self.leaky, "c.json")
        let twice = try VCRTool.run(["redact", c, folder.file("./c.json").path] + Self.options)
        #expect(twice.status == 0, "\(twice)")
        #expect(twice.lines.filter { $0.hasSuffix("c.json: redacted 8 fields in 2 requests") }.count == 1, "\(twice)")
        #expect(!twice.stdout.contains("nothing to redact"), "\(twice)")
    }

    @Test func anUnreadableFileIsReportedAndTheOthersStillRedacted() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.file("Sub"), withIntermediateDirectories: true)
        let good = try folder.write(Self.leaky, "good.json")
        let nested = try folder.write(Self.leaky, "Sub/nested.json")
        let broken = try folder.write("{\"format\": \"HTTPVCR\"", "broken.json")
        let brokenBefore = try Data(contentsOf: URL(fileURLWithPath: broken))
        let result = try VCRTool.run(["redact", folder.url.path, folder.file("missing.json").path] + Self.options)
        #expect(result.status == 2, "\(result)")
        #expect(result.lines.contains { $0.hasPrefix("\(broken): error: ") }, "the file is named: \(result)")
        #expect(result.stdout.contains("missing.json: error: no such file or folder"), "\(result)")
        #expect(
            result.lines.last
                == "vcr redact: redacted 16 fields in 4 requests across 2 of 3 cassettes; 2 could not be read or written",
            "\(result)"
        )
        for path in [good, nested] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for secret in Self.secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) in \(path)") }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: broken)) == brokenBefore)

        // A foreign cassette named among others is an error, as when named alone; the others are still redacted.
        let har = try folder.write(Self.leaky, "named.har", as: .har)
        let other = try folder.write(Self.leaky, "other.json")
        let named = try VCRTool.run(["redact", har, other] + Self.options)
        #expect(named.status == 2, "\(named)")
        #expect(named.lines.contains { $0.hasPrefix("\(har): error: ") && $0.contains("vcr convert") }, "\(named)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: other)).range(of: Data("pw-secret-1".utf8)) == nil)
    }

    @Test func anEmptyFolderHasNothingToRedact() throws {
        let folder = try TemporaryFolder()
        try folder.write("not a cassette", "notes.txt")
        let result = try VCRTool.run(["redact", folder.url.path] + Self.options)
        #expect(result.status == 0, "\(result)")
        let note = "\(folder.url.path): nothing to redact: no cassettes (.json, .plist) in this folder"
        #expect(result.lines == [note], "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        let dryRun = try VCRTool.run(["redact", folder.url.path, "--secrets", "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun)")
        #expect(dryRun.stdout.contains("nothing to redact"), "\(dryRun)")
    }

    @Test func secretsHidesWhatRecordingHidesByDefault() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.leaky, "leaky.json")
        #expect(try VCRTool.run("lint", path).status == 1)
        let result = try VCRTool.run("redact", path, "--secrets")
        #expect(result.status == 0, "\(result)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for secret in Self.secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is still there") }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("sid=[FILTERED]"), "cookie names stay")
        #expect(try VCRTool.run("lint", path).status == 0, "lint finds nothing once --secrets ran")
    }

    /// The issue's case: an API-key header, an `access_token` query parameter, a JSON password and a `Set-Cookie`,
    /// all hidden by `--secrets` alone, as the default configuration would have recorded them.
    @Test func secretsAloneHidesKeysTokensPasswordsAndCookies() throws {
        let tape = Tapes.tape(Tapes.exchange(
            method: "POST",
            url: "https://api.example.com/v1/session?user=ada&access_token=at-secret-9",
            requestHeaders: [
                RecordedHeader("Content-Type", "application/json"),
                RecordedHeader("X-Api-Key", "ak-secret-7"),
            ],
            requestBody: #"{"user":"ada","password":"pw-secret-8"}"#,
            responseHeaders: [
                RecordedHeader("Content-Type", "application/json"),
                RecordedHeader("Set-Cookie", "sid=ck-secret-6; Path=/; HttpOnly"),
            ],
            chunks: [#"{"ok":true}"#]
        ))
        let secrets = ["ak-secret-7", "at-secret-9", "pw-secret-8", "ck-secret-6"]
        let folder = try TemporaryFolder()
        let path = try folder.write(tape, "session.json")
        #expect(try VCRTool.run("lint", path).status == 1)

        let dryRun = try VCRTool.run("redact", path, "--secrets", "--dry-run")
        #expect(dryRun.status == 0, "\(dryRun)")
        for secret in secrets { #expect(!dryRun.stdout.contains(secret), "the report does not repeat \(secret)") }
        #expect(
            dryRun.lines.last == "\(path): would change 5 fields in 1 request (dry run: nothing written)", "\(dryRun)"
        )

        let result = try VCRTool.run("redact", path, "--secrets")
        #expect(result.status == 0, "\(result)")
        #expect(result.lines.last == "\(path): redacted 5 fields in 1 request", "\(result)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for secret in secrets { #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is still there") }
        let redacted = try #require(try CassetteFile.read(at: URL(fileURLWithPath: path)).tape.interactions.first)
        #expect(redacted.request.headers[field: "X-Api-Key"] == "[FILTERED]")
        #expect(redacted.request.url == "https://api.example.com/v1/session?user=ada&access_token=%5BFILTERED%5D")
        #expect(redacted.response?.url == redacted.request.url)
        #expect(redacted.request.body == Data(#"{"user":"ada","password":"[FILTERED]"}"#.utf8))
        #expect(redacted.response?.headers[field: "Set-Cookie"] == "sid=[FILTERED]; Path=/; HttpOnly")
        #expect(try VCRTool.run("lint", path).status == 0)

        // The requests are what the default configuration makes of them, so the cassette keeps matching with it.
        let byDefault = tape.redacted(with: VCRConfiguration())
        #expect(redacted.request == byDefault.interactions[0].request)
        #expect(redacted.response == byDefault.interactions[0].response)
    }

    @Test func secretsWritesWhatRecordingWrites() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.leaky, "leaky.json")
        for extra in [["--remove"], ["--placeholder", "<x>"]] {
            let result = try VCRTool.run(["redact", path, "--secrets"] + extra)
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("--secrets always writes [FILTERED]"), "\(result)")
        }
        // With names given, the placeholder is theirs; --secrets still writes [FILTERED].
        let both = try VCRTool.run("redact", path, "--secrets", "--json-key", "user", "--placeholder", "<user>")
        #expect(both.status == 0, "\(both)")
        let login = try #require(try CassetteFile.read(at: URL(fileURLWithPath: path)).tape.interactions.first)
        #expect(login.request.body == Data(#"{"user":"<user>","password":"[FILTERED]"}"#.utf8))
    }

    @Test func refusesForeignFormats() throws {
        let folder = try TemporaryFolder()
        let har = try folder.write(Self.leaky, "leaky.har", as: .har)
        let vcrpy = try folder.copy(VCRTool.vcrPyFixture, as: "vcrpy.json")
        for (path, name) in [(har, "HAR"), (vcrpy, "VCR.py")] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let result = try VCRTool.run("redact", path, "--header", "X-Api-Key")
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("is a \(name) cassette"), "\(result)")
            #expect(result.stderr.contains("vcr convert \(path) "), "\(result)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    @Test func needsSomethingToRedact() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.leaky, "leaky.json")
        let result = try VCRTool.run("redact", path)
        #expect(result.status == 2)
        #expect(result.stderr.contains("nothing to redact"), "\(result)")
        #expect(result.stderr.contains("USAGE: vcr redact"), "\(result)")
    }

    @Test func nothingMatchingLeavesTheFileAlone() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.leaky, "leaky.json")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let result = try VCRTool.run("redact", path, "--header", "X-Other", "--query", "sig", "--json-key", "nope")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("nothing to redact"), "\(result)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let after = try FileManager.default.attributesOfItem(atPath: path)
        #expect(after[.systemFileNumber] as? Int == attributes[.systemFileNumber] as? Int, "not even rewritten")
    }

    /// The README's story: a VCR.py cassette converted, linted (four secrets), redacted, and then clean.
    /// Returns the redacted cassette's path in `folder`.
    func readmeStory(on source: URL, in folder: TemporaryFolder) throws -> String {
        try #require(FileManager.default.fileExists(atPath: source.path), "missing fixture \(source.path)")
        let path = folder.file("httpbin-basics.json").path
        let convert = try VCRTool.run("convert", source.path, path)
        #expect(convert.status == 0, "\(convert)")
        let lint = try VCRTool.run("lint", path)
        #expect(lint.status == 1)
        #expect(lint.lines.count == 4, "\(lint)")

        let redact = try VCRTool.run(
            "redact", path, "--json-key", "password", "--query", "session", "--header", "Set-Cookie"
        )
        #expect(redact.status == 0, "\(redact)")
        #expect(try VCRTool.run("lint", path).status == 0)
        return path
    }

    static let committedExample = VCRTool.packageRoot
        .appendingPathComponent("Cassettes.bundle/Examples/httpbin-basics.json")

    /// The committed example is the story run on the project's own VCR.py fixture: byte for byte.
    @Test func readmeStoryReproducesTheCommittedExample() throws {
        let folder = try TemporaryFolder()
        let path = try readmeStory(on: VCRTool.vcrPyFixture, in: folder)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: Self.committedExample))
    }
}
