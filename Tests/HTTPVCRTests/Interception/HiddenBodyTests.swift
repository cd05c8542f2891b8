import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

extension VCRTests {
    /// An upload task whose body the loader hides (Apple's, through ``LoaderDouble``: ``ApplePlatform`` shows the
    /// protocol no upload body) replays where nothing needs the body, and is refused, naming what does, where
    /// something does. On Linux the body is read from the task
    /// (`TrafficTests.uploadTaskBodiesReachTheServerAndTheTape`,
    /// ``whereTheLoaderShowsTheBodyTheBodyMatcherMatchesIt()``).
    @Suite struct HiddenBodyTests {
        static let url = "http://uploads.test/files?name=report"
        static let body = Data(#"{"report":"quarterly"}"#.utf8)

        /// A cassette holding one upload to ``url``, with its body, answered with 201 and `stored`.
        func writeCassette(in folder: borrowing TemporaryFolder, name: String = "upload") throws {
            try CassetteFile.write(Tape(interactions: [Interaction(
                chapter: 1,
                request: RecordedRequest(
                    method: "POST", url: Self.url, headers: [RecordedHeader("Content-Type", "application/json")],
                    body: Self.body
                ),
                response: RecordedResponse(url: Self.url, statusCode: 201),
                chunks: [Data("stored".utf8)]
            )]), to: folder.url.appendingPathComponent("\(name).json"), as: .json)
        }

        /// An upload task of a session HTTPVCR is not in, never resumed: the loader double loads it.
        func uploadTask(to url: String = Self.url) -> URLSessionUploadTask {
            var request = URLRequest(url: URL(string: url)!)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            return URLSession(configuration: .ephemeral).uploadTask(with: request, from: Self.body)
        }

        /// Loads an upload task under the Apple loader, with the cassette `name` in `folder`; the failures kept.
        func upload(
            in folder: borrowing TemporaryFolder,
            to url: String = Self.url,
            _ configure: @escaping (inout VCRConfiguration) -> Void
        ) async throws -> (outcome: LoaderDouble.Outcome, failures: [VCRError], cassette: Cassette) {
            try await withCassette("upload", in: folder.path, configure) { cassette in
                let outcome = await LoaderDouble(.apple).load(uploadTask(to: url))
                return (outcome, VCR.takeFailures(), cassette)
            }
        }

        @Test func theApplePlatformHidesAnUploadTasksBody() {
            let task = uploadTask()
            #expect(task.originalRequest?.httpBody == nil, "the protocol's request carries no body")
            #expect(ApplePlatform().uploadBody(of: task) == nil)
        }

        @Test(arguments: [RecordMode.never, .once, .new])
        func anUploadWhoseBodyIsHiddenReplaysByMethodAndURL(_ mode: RecordMode) async throws {
            let folder = try TemporaryFolder()
            try writeCassette(in: folder)
            let (outcome, failures, cassette) = try await upload(in: folder) { $0.recordMode = mode }
            #expect(failures.isEmpty)
            #expect(outcome.error == nil)
            #expect(outcome.response?.statusCode == 201)
            #expect(outcome.body == Data("stored".utf8))
            #expect(cassette.playCount == 1)
            #expect(!cassette.hasUnsavedChanges, "nothing recorded")
        }

        @Test func withTheBodyMatcherItIsRefusedNamingTheMatcher() async throws {
            let folder = try TemporaryFolder()
            try writeCassette(in: folder)
            let (outcome, failures, cassette) = try await upload(in: folder) {
                $0.recordMode = .never
                $0.matchers = [.method, .uri, .body]
            }
            let message = "HTTPVCR cannot see the body of the upload task POST \(Self.url): the loader keeps an "
                + "upload task's body from URL protocols (Apple platforms). The cassette matches requests by body "
                + "(matcher .body): matching needs the body. It was refused, unsent. Set the body on the request "
                + "(request.httpBody) and send it with data(for:) instead of upload(for:from:) or "
                + "uploadTask(with:from:), or leave .body out of the cassette's matchers (configuration.matchers) to "
                + "replay it by the rest."
            #expect(failures.map(\.message) == [message])
            #expect(failures.first?.code == .unsupportedRequest)
            #expect(failures.first?.request == "POST \(Self.url)")
            #expect((outcome.error as? VCRError)?.message == message, "the task fails with it")
            #expect(outcome.response == nil)
            #expect(cassette.playCount == 0, "the chapter is left for a request that can match it")
            #expect(cassette.requestCount == 1, "it reached the cassette")
        }

        /// The body filter is named too: the body matcher would compare what it makes of the body.
        @Test func aBodyFilterTheBodyMatcherComparesIsNamed() async throws {
            let folder = try TemporaryFolder()
            try writeCassette(in: folder)
            let (_, failures, _) = try await upload(in: folder) {
                $0.recordMode = .never
                $0.matchers = [.method, .uri, .named("body")]
                $0.postBodyFilter = .replacing(["report": "filtered"])
            }
            #expect(failures.count == 1)
            #expect(failures.first?.message.contains(
                "(matcher .body, which compares the body as postBodyFilter rewrites it): matching needs the body."
            ) == true)
        }

        /// A body filter alone needs nothing: matching reads its result only through a body matcher.
        @Test func aBodyFilterWithoutTheBodyMatcherStillReplays() async throws {
            let folder = try TemporaryFolder()
            try writeCassette(in: folder)
            let (outcome, failures, _) = try await upload(in: folder) {
                $0.recordMode = .never
                $0.postBodyFilter = .custom { _, _ in Data("filtered".utf8) }
            }
            #expect(failures.isEmpty)
            #expect(outcome.response?.statusCode == 201)
        }

        @Test func anUploadTheCassetteWouldRecordIsRefusedNamingRecording() async throws {
            let folder = try TemporaryFolder()
            try writeCassette(in: folder)
            let elsewhere = "http://uploads.test/elsewhere"
            let (outcome, failures, cassette) = try await upload(in: folder, to: elsewhere) { $0.recordMode = .new }
            let message = "HTTPVCR cannot see the body of the upload task POST \(elsewhere): the loader keeps an "
                + "upload task's body from URL protocols (Apple platforms). It matched nothing on the cassette, and "
                + "record mode .new records it: recording needs the body, which the server would not get and the "
                + "cassette would not keep. It was refused, unsent. Set the body on the request (request.httpBody) "
                + "and send it with data(for:) instead of upload(for:from:) or uploadTask(with:from:), so that it is "
                + "recorded with its body. If the cassette should hold it already, replay with record mode .never to "
                + "see what differs."
            #expect(failures.map(\.message) == [message])
            #expect((outcome.error as? VCRError)?.code == .unsupportedRequest)
            #expect(!cassette.hasUnsavedChanges, "nothing recorded")
            #expect(cassette.playCount == 0)
        }

        /// `.all` records without matching; a new cassette in `.once` matches nothing.
        @Test(arguments: [RecordMode.all, .once])
        func everyModeThatRecordsRefusesIt(_ mode: RecordMode) async throws {
            let folder = try TemporaryFolder()
            if mode == .all { try writeCassette(in: folder) }
            let (outcome, failures, cassette) = try await upload(in: folder) { $0.recordMode = mode }
            #expect(failures.count == 1)
            let expected = mode == .all ? "Record mode .all records every request: recording needs the body"
                : "It matched nothing on the cassette, and record mode .once records it: recording needs the body"
            #expect(failures.first?.message.contains(expected) == true, "\(failures)")
            #expect(outcome.error != nil)
            #expect(outcome.response == nil)
            #expect(cassette.playCount == 0)
            let file = folder.url.appendingPathComponent("upload.json")
            if FileManager.default.fileExists(atPath: file.path) {
                let tape = try CassetteFile.read(at: file).tape
                #expect(tape.interactions.isEmpty, ".all erased the tape and recorded nothing")
            }
        }

        /// On a cassette that may not record, an unmatched upload says it was matched without its body.
        @Test func anUnmatchedUploadSaysItWasMatchedWithoutItsBody() async throws {
            let folder = try TemporaryFolder()
            try writeCassette(in: folder)
            let (_, failures, _) = try await upload(in: folder, to: "http://uploads.test/elsewhere") {
                $0.recordMode = .never
            }
            #expect(failures.map(\.code) == [.noMatch])
            #expect(failures.first?.message.hasPrefix("No recorded request matches POST http://uploads.test/elsewhere")
                == true)
            #expect(failures.first?.message.contains(
                "note: HTTPVCR could not see this upload's body (the loader keeps an upload task's body from URL "
                    + "protocols), so it was matched without one"
            ) == true)
        }

        /// A matcher of the app's own is not asked whether it reads the body: it gets the request without one.
        @Test func aMatcherOfTheAppsOwnGetsTheRequestWithoutItsBody() async throws {
            let folder = try TemporaryFolder()
            try writeCassette(in: folder)
            let seen = Locked<[Data?]>([])
            let (outcome, failures, _) = try await upload(in: folder) {
                $0.recordMode = .never
                $0.matchers = [.method, .uri, Matcher(name: "sees-body") { request, _ in
                    seen.withLock { $0.append(request.httpBody) }
                    return true
                }]
            }
            #expect(failures.isEmpty)
            #expect(outcome.response?.statusCode == 201)
            #expect(seen.withLock { $0 } == [nil])
        }

        /// The Linux loader shows the body (corelibs' `knownBody`): the same upload task matches by body there.
        @Test func whereTheLoaderShowsTheBodyTheBodyMatcherMatchesIt() async throws {
            let folder = try TemporaryFolder()
            try writeCassette(in: folder)
            try await withCassette("upload", in: folder.path, {
                $0.recordMode = .never
                $0.matchers = [.method, .uri, .body]
            }) { cassette in
                let outcome = await LoaderDouble(.corelibs).load(uploadTask())
                #expect(VCR.takeFailures().isEmpty)
                #expect(outcome.response?.statusCode == 201)
                #expect(outcome.body == Data("stored".utf8))
                #expect(cassette.playCount == 1)
            }
        }
    }
}
