import Foundation
import HTTPVCR
import Testing

@Suite struct DiffTests {
    static func tape(_ bodies: [(path: String, status: Int, body: String)]) -> Tape {
        Tape(interactions: bodies.enumerated().map { index, entry in
            let url = "https://api.example.com\(entry.path)"
            return Interaction(
                chapter: index + 1,
                request: RecordedRequest(method: "GET", url: url, headers: [], body: nil),
                response: RecordedResponse(
                    url: url, statusCode: entry.status, httpVersion: "HTTP/1.1",
                    headers: [RecordedHeader("Content-Type", "application/json")]
                ),
                chunks: [Data(entry.body.utf8)]
            )
        })
    }

    static let older = tape([
        ("/items", 200, #"{"items": [{"id": 1, "price": 2.5, "name": "a"}], "next": null}"#),
        ("/user", 200, #"{"id": 1}"#),
    ])
    static let newer = tape([
        ("/items", 200, #"{"items": [{"id": 1, "price": "2.50"}], "next": "/items?page=2", "total": 1}"#),
        ("/health", 503, "{}"),
    ])

    static let expectedReport = """
        ~ GET https://api.example.com/items
            $.items[*].price: number → string
            $.items[*].name: removed (string)
            $.next: null → string
            $.total: added (number)
        + GET https://api.example.com/health (new)
        - GET https://api.example.com/user (gone)

        1 changed, 1 new, 1 gone
        """

    @Test func printsShapeDifferencesBetweenTwoFiles() throws {
        let folder = try TemporaryFolder()
        let old = try folder.write(Self.older, "old.json")
        let new = try folder.write(Self.newer, "new.json")
        let result = try VCRTool.run("diff", old, new)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "--- \(old) (2 requests)\n+++ \(new) (2 requests)\n\(Self.expectedReport)\n", "\(result)")
        // The same differences the library reports.
        #expect(CassetteDrift.between(Self.older, Self.newer).flatMap(\.differences).map(\.description) == [
            "$.items[*].price: number → string", "$.items[*].name: removed (string)", "$.next: null → string",
            "$.total: added (number)",
        ])
    }

    @Test func sameCassettesDoNotDifferAndValuesAreComparedWhereNamed() throws {
        let folder = try TemporaryFolder()
        let old = try folder.write(Self.older, "old.json")
        // Any format vcr reads: the same tape as HAR.
        let same = try folder.write(Self.older, "same.har", as: .har)
        let result = try VCRTool.run("diff", old, same)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasSuffix("No differences in requests or response shapes.\n"), "\(result)")

        let changed = try folder.write(Self.tape([
            ("/items", 200, #"{"items": [{"id": 2, "price": 2.5, "name": "a"}], "next": null}"#),
            ("/user", 200, #"{"id": 1}"#),
        ]), "changed.json")
        #expect(try VCRTool.run("diff", old, changed).status == 0)
        let valued = try VCRTool.run("diff", old, changed, "--value", "$.items[*].id")
        #expect(valued.status == 1, "\(valued)")
        #expect(valued.stdout.contains("    $.items[*].id: 1 → 2\n"), "\(valued)")
    }

    @Test func comparesWithTheVersionAtAGitRevision() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.older, "Cassette.json")
        try git(["init", "-q"], in: folder.url)
        try git(["add", "Cassette.json"], in: folder.url)
        try git(["-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "recorded"], in: folder.url)
        try CassetteFile.write(Self.newer, to: URL(fileURLWithPath: path), as: .json)

        let result = try VCRTool.run(["diff", "Cassette.json", "--against", "HEAD"], in: folder.url)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "--- HEAD:Cassette.json (2 requests)\n+++ Cassette.json (2 requests)\n\(Self.expectedReport)\n", "\(result)")

        let unknown = try VCRTool.run(["diff", "Cassette.json", "--against", "no-such-revision"], in: folder.url)
        #expect(unknown.status == 2, "\(unknown)")
        #expect(unknown.stderr.contains("Cassette.json: git cannot give its version at no-such-revision"), "\(unknown)")
    }

    @Test func usageMistakes() throws {
        let one = try VCRTool.run("diff", "only.json")
        #expect(one.status == 2)
        #expect(one.stderr.contains("error: missing <old> or <new>"), "\(one)")
        let badPath = try VCRTool.run("diff", "a.json", "b.json", "--value", "items.id")
        #expect(badPath.status == 2)
        #expect(badPath.stderr.contains("error: --value items.id: not a JSON location"), "\(badPath)")
        let missing = try VCRTool.run("diff", "nope.json", "nope2.json")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("nope.json: no such file"), "\(missing)")
    }

    private func git(_ arguments: [String], in folder: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        process.currentDirectoryURL = folder
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "git \(arguments.joined(separator: " ")) failed")
    }
}
