import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPBinTestSupport
@testable import HTTPVCR
import Testing

extension VCRTests {
    /// `RecordMode.verify` against httpbin: record, edit the recording, verify.
    @Suite struct VerifyModeTests {
        static let postBody = Data(#"{"name":"Ada","age":36,"score":1.0}"#.utf8)

        struct Answer {
            var status: Int
            var body: Data
        }

        /// What the app gets for each request.
        @discardableResult
        static func requests(_ paths: [String], session: URLSession) async throws -> [String: Answer] {
            var answers: [String: Answer] = [:]
            for path in paths {
                var request = URLRequest(url: try HTTPBin.url(path))
                if path == "/post" {
                    request.httpMethod = "POST"
                    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                    request.httpBody = postBody
                }
                let (data, response) = try await session.data(for: request)
                answers[path] = Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
            }
            return answers
        }

        /// The recording of `path` changed by `edit`.
        static func editing(_ tape: Tape, _ path: String, _ edit: (Scene.Event) -> Scene.Event) -> Tape {
            let chapter = tape.interactions.first { $0.request.url.hasSuffix(path) }!.chapter
            return Tape(scenes: tape.scenes.map { scene in
                scene.chapter == chapter ? Scene(chapter: scene.chapter, time: scene.time, event: edit(scene.event)) : scene
            })
        }

        static func replacing(_ text: String, with replacement: String, in event: Scene.Event) -> Scene.Event {
            guard case let .data(data) = event else { return event }
            let body = String(decoding: data, as: UTF8.self)
            precondition(body.contains(text), "\(text) not in \(body)")
            return .data(Data(body.replacingOccurrences(of: text, with: replacement).utf8))
        }

        @Test func reportsEditedRecordingsWhileTheAppGetsTheLiveAnswer() async throws {
            let folder = try TemporaryFolder()
            let session = vcrSession()
            let paths = ["/json", "/post", "/get?x=1", "/headers"]
            let recorded = try await withCassette("Verify", in: folder.path, { $0.recordMode = .once }) { _ in
                try await Self.requests(paths, session: session)
            }
            let file = folder.url.appendingPathComponent("Verify.json")
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            #expect(text.contains(#""dataLayout": "indent2 newline""#), "httpbin's JSON is stored as JSON")
            #expect(text.contains(#""bodyLayout": "compact""#), "the posted JSON body is stored as JSON")
            #expect(!text.contains(#"\"json\""#), "an echoed JSON body is not escaped twice")

            // Replayed byte for byte.
            let replayed = try await withCassette("Verify", in: folder.path, { $0.recordMode = .never }) { cassette in
                let answers = try await Self.requests(paths, session: session)
                #expect(cassette.playCount == paths.count)
                return answers
            }
            for path in paths { #expect(replayed[path]?.body == recorded[path]?.body, "\(path)") }

            // Edit the recordings: a key removed, a number turned into a string, a status changed.
            var tape = try CassetteFile.read(at: file).tape
            tape = Self.editing(tape, "/json") { Self.replacing(#""author": "Yours Truly","#, with: "", in: $0) }
            tape = Self.editing(tape, "/post") { Self.replacing(#""age": 36,"#, with: #""age": "36","#, in: $0) }
            tape = Self.editing(tape, "/get?x=1") { event in
                guard case var .response(response) = event else { return event }
                response.statusCode = 201
                return .response(response)
            }
            try CassetteFile.write(tape, to: file, as: .json)
            let edited = try Data(contentsOf: file)

            // The app asks for three of them, and one the cassette does not have.
            let verified = ["/json", "/post", "/get?x=1", "/anything/new"]
            let (answers, drift) = try await withCassette("Verify", in: folder.path, { $0.recordMode = .verify }) { cassette in
                let answers = try await Self.requests(verified, session: session)
                #expect(cassette.recordMode == .verify)
                return (answers, cassette.drift)
            }
            let base = try HTTPBin.baseURL().absoluteString
            #expect(drift.map(\.description) == [
                "GET \(base)/json: $.slideshow.author: added (string)",
                "POST \(base)/post: $.json.age: string → number",
                "GET \(base)/get?x=1: status: 201 → 200",
                "new request (no recording): GET \(base)/anything/new",
                "unused recording (not requested): GET \(base)/headers",
            ])
            #expect(drift.map(\.kind) == [.changed, .changed, .changed, .new, .unused])
            // The app got the live answers, not the edited ones.
            #expect(answers["/get?x=1"]?.status == 200)
            let post = String(decoding: answers["/post"]?.body ?? Data(), as: UTF8.self)
            #expect(post.contains(#""age": 36,"#), "\(post)")
            let json = String(decoding: answers["/json"]?.body ?? Data(), as: UTF8.self)
            #expect(json.contains("Yours Truly"))
            // The file is untouched.
            #expect(try Data(contentsOf: file) == edited)

            // vcr diff's comparison says the same of the edited cassette and one recorded from the live service.
            _ = try await withCassette("Live", in: folder.path, { $0.recordMode = .once }) { _ in
                try await Self.requests(verified, session: session)
            }
            let live = try CassetteFile.read(at: folder.url.appendingPathComponent("Live.json")).tape
            #expect(CassetteDrift.between(tape, live) == drift)
        }

        @Test func anUntouchedCassetteReportsNothingAndNamedValuesAreCompared() async throws {
            let folder = try TemporaryFolder()
            let session = vcrSession()
            let paths = ["/json", "/post"]
            _ = try await withCassette("Untouched", in: folder.path, { $0.recordMode = .once }) { _ in
                try await Self.requests(paths, session: session)
            }
            let file = folder.url.appendingPathComponent("Untouched.json")
            let before = try Data(contentsOf: file)
            let drift = try await withCassette("Untouched", in: folder.path, { $0.recordMode = .verify }) { cassette in
                try await Self.requests(paths, session: session)
                return cassette.drift
            }
            #expect(drift == [])
            #expect(try Data(contentsOf: file) == before)

            // Values count only where named.
            var tape = try CassetteFile.read(at: file).tape
            tape = Self.editing(tape, "/json") { Self.replacing(#""title": "Sample Slide Show""#, with: #""title": "Old""#, in: $0) }
            try CassetteFile.write(tape, to: file, as: .json)
            let named = try await withCassette("Untouched", in: folder.path, { configuration in
                configuration.recordMode = .verify
                configuration.comparedValuePaths = ["$.slideshow.title", "$.slideshow.slides[*].type"]
            }) { cassette in
                try await Self.requests(paths, session: session)
                return cassette.drift
            }
            let base = try HTTPBin.baseURL().absoluteString
            #expect(named.map(\.description) == [#"GET \#(base)/json: $.slideshow.title: "Old" → "Sample Slide Show""#])
        }

        @Test func verifyIsNamedByTheEnvironmentVariable() {
            #expect(RecordMode(rawValue: "verify") == .verify)
            #expect(RecordMode.from(environment: ["VCR_RECORD_MODE": "Verify"]) == .verify)
        }
    }
}
