import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Under a cassette the app's own session decides, as it does against the server: its configuration shapes what
    /// is sent, its delegate answers redirects and challenges, recording and replaying alike.
    @Suite struct AppSessionTests {
        /// What one run of a scenario gave, and the requests of it the server saw (those whose target holds its id).
        struct Run<Outcome> {
            let outcome: Outcome
            let served: [String]
        }

        /// Runs `body` with no cassette (what the server sees without HTTPVCR), recording, then replaying with
        /// `.never`; returns each run and the tape. `body` gets an id to put in its URLs: the run without a cassette
        /// has one of its own, so that the server's log (written after each answer) tells the runs apart.
        func liveRecordReplay<Outcome>(
            _ configure: @escaping (inout VCRConfiguration) -> Void = { _ in },
            _ body: (_ id: String) async throws -> Outcome
        ) async throws -> (live: Run<Outcome>, recorded: Run<Outcome>, replayed: Run<Outcome>, tape: Tape) {
            try await holdingCassettes {
                let folder = try TemporaryFolder()
                let (liveID, id) = (String(UUID().uuidString.prefix(13)), String(UUID().uuidString.prefix(13)))
                let start = try HTTPBin.settledRequestCount()
                let live = try await body(liveID)
                let recorded = try await withCassette("app", in: folder.path, { configure(&$0); $0.recordMode = .all }) { _ in
                    try await body(id)
                }
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("app.json")).tape
                // Every request the recording sent to the server is logged, and so is each the run without a cassette
                // sent.
                let server = try HTTPBin.baseURL().port
                let sent = tape.interactions.flatMap { [$0.request.url] + $0.redirects.map(\.request.url) }
                    .filter { URL(string: $0)?.port == server }.count
                let liveServed = try HTTPBin.requests(containing: liveID, since: start, atLeast: sent)
                let recordServed = try HTTPBin.requests(containing: id, since: start, atLeast: sent)
                let before = try HTTPBin.settledRequestCount()
                let replayed = try await withCassette("app", in: folder.path, { configure(&$0); $0.recordMode = .never }) { _ in
                    try await body(id)
                }
                let replayServed = try HTTPBin.requestsFromAnyProcess(since: before).filter { $0.contains(id) }
                return (
                    Run(outcome: live, served: liveServed), Run(outcome: recorded, served: recordServed),
                    Run(outcome: replayed, served: replayServed), tape
                )
            }
        }

        // MARK: Configuration

        @Test func theSessionsAdditionalHeadersReachTheServerAndTheTapeAndTakePartInMatching() async throws {
            let session = appSession { configuration in
                configuration.httpAdditionalHeaders = [
                    "X-Api-Key": "key-2f9c1", "Accept": "application/vnd.app+json", "User-Agent": "App/1.0", "X-Mine": "session",
                ]
            }
            let runs = try await liveRecordReplay({ $0.matchers = [.method, .path, .query, .headers] }) { id in
                var request = URLRequest(url: try HTTPBin.url("/headers?id=\(id)"))
                request.setValue("request", forHTTPHeaderField: "x-mine")  // the request's own field wins, whatever its case
                let (data, _) = try await session.data(for: request)
                return try #require(data.json?["headers"] as? [String: String])
            }
            let headers = runs.live.outcome
            #expect(headers["X-Api-Key"] == "key-2f9c1")
            #expect(headers["Accept"] == "application/vnd.app+json")
            #expect(headers["User-Agent"] == "App/1.0")
            #expect(headers["X-Mine"] == "request")
            #expect(runs.recorded.outcome == headers)
            // The key is a secret by its name, filtered from the tape with every echo of it (here, the body).
            var echoed = headers
            echoed["X-Api-Key"] = "[FILTERED]"
            #expect(runs.replayed.outcome == echoed)
            #expect(runs.replayed.served.isEmpty)
            // The tape holds the request as the server got it (the key is a secret by name: filtered).
            let taped = try #require(runs.tape.interactions.first?.request.headers)
            #expect(taped[field: "User-Agent"] == "App/1.0")
            #expect(taped[field: "Accept"] == "application/vnd.app+json")
            #expect(taped[field: "X-Api-Key"] == "[FILTERED]")
            #expect(taped[field: "X-Mine"] == "request")
        }

        @Test func aSessionWithOtherHeadersDoesNotMatchUnderTheHeadersMatcher() async throws {
            let id = UUID().uuidString
            let url = try HTTPBin.url("/headers?id=\(id)")
            let folder = try TemporaryFolder()
            try await holdingCassettes {
                let recording = appSession { $0.httpAdditionalHeaders = ["Accept": "application/vnd.v1+json"] }
                try await withCassette("headers", in: folder.path, { $0.matchers = [.method, .path, .headers] }) { _ in
                    _ = try await recording.data(from: url)
                }
                let replaying = appSession { $0.httpAdditionalHeaders = ["Accept": "application/vnd.v2+json"] }
                try await withCassette("headers", in: folder.path, { $0.matchers = [.method, .path, .headers] }) { _ in
                    let error = await #expect(throws: VCRError.self) { try await replaying.data(from: url) }
                    #expect(error?.code == .noMatch)
                    #expect(VCR.takeFailures().first?.message.contains("application/vnd.v2+json") == true)
                }
            }
        }

        @Test func theSessionsTimeoutAppliesWhileRecordingUnlessTheRequestSetsItsOwn() async throws {
            let session = appSession { $0.timeoutIntervalForRequest = 1 }
            let runs = try await liveRecordReplay({ $0.recordsConnectionErrors = true }) { id in
                var patient = URLRequest(url: try HTTPBin.url("/delay/2?id=\(id)&patient"))
                patient.timeoutInterval = 5
                let hurried = await outcome { try await session.data(from: try HTTPBin.url("/delay/2?id=\(id)")) }
                let waited = try await session.data(for: patient)
                return [(hurried.error as? URLError)?.code == .timedOut, (waited.1 as? HTTPURLResponse)?.statusCode == 200]
            }
            #expect(runs.live.outcome == [true, true])
            #expect(runs.recorded.outcome == [true, true])
            #expect(runs.replayed.outcome == [true, true])
        }

        @Test func aFailedTaskHasItsErrorOnTheTask() async throws {
            let port = try HTTPBin.closedPort()
            let runs = try await liveRecordReplay({ $0.recordsConnectionErrors = true }) { id in
                let delegate = AppDelegate()
                let session = appSession(delegate: delegate)
                defer { session.finishTasksAndInvalidate() }
                let task = session.dataTask(with: URL(string: "http://127.0.0.1:\(port)/refused?id=\(id)")!)
                let error = await delegate.run(task)
                return [(error as? URLError)?.code, (task.error as? URLError)?.code]
            }
            #expect(runs.live.outcome == [.cannotConnectToHost, .cannotConnectToHost])
            #expect(runs.recorded.outcome == runs.live.outcome)
            #expect(runs.replayed.outcome == runs.live.outcome)
        }

        // MARK: Redirects

        /// A delegate task's callbacks and body, for a request that redirects to a path holding `id`.
        func redirecting(
            _ id: String, answer: @escaping @Sendable (HTTPURLResponse, URLRequest) -> URLRequest?
        ) async throws -> (calls: [String], status: Int?, body: String, proposed: [String]) {
            let delegate = AppDelegate()
            delegate.redirect = answer
            let session = appSession(delegate: delegate)
            defer { session.finishTasksAndInvalidate() }
            let url = try HTTPBin.url("/redirect-to?url=%2Fanything%2F\(id)&status_code=302")
            let error = await delegate.run(session.dataTask(with: url))
            #expect(error == nil)
            return (
                delegate.calls,
                (delegate.responses.last as? HTTPURLResponse)?.statusCode,
                String(decoding: delegate.body, as: UTF8.self),
                delegate.redirects.compactMap { $0.proposed.url?.path }
            )
        }

        @Test func aRedirectTheDelegateRefusesEndsWithTheRedirect() async throws {
            let runs = try await liveRecordReplay { id in try await redirecting(id) { _, _ in nil } }
            let live = runs.live.outcome
            #expect(live.calls == ["willPerformHTTPRedirection", "didReceiveResponse", "didComplete"]
                || live.calls == ["willPerformHTTPRedirection", "didReceiveResponse", "didReceiveData", "didComplete"])
            #expect(live.status == 302)
            #expect(live.proposed.count == 1 && live.proposed[0].hasPrefix("/anything/"))
            #expect(runs.live.served.count == 1)
            #expect(runs.recorded.served.count == 1)  // the server sees what it sees without HTTPVCR
            #expect(runs.replayed.served.isEmpty)
            for run in [runs.recorded.outcome, runs.replayed.outcome] {
                #expect(run.calls == live.calls)
                #expect(run.status == 302)
                #expect(run.body.count == live.body.count)
                #expect(run.proposed.count == 1 && run.proposed[0].hasPrefix("/anything/"))
            }
            #expect(runs.tape.interactions.count == 1)
            #expect(runs.tape.interactions[0].redirects.isEmpty)
            #expect(runs.tape.interactions[0].response?.statusCode == 302)
        }

        @Test func aRedirectTheDelegateFollowsIsAskedAboutRecordingAndReplaying() async throws {
            let runs = try await liveRecordReplay { id in try await redirecting(id) { $1 } }
            let live = runs.live.outcome
            #expect(live.calls == ["willPerformHTTPRedirection", "didReceiveResponse", "didReceiveData", "didComplete"])
            #expect(live.status == 200)
            #expect(runs.live.served.count == 2)
            #expect(runs.recorded.served.count == 2)
            #expect(runs.replayed.served.isEmpty)
            for run in [runs.recorded.outcome, runs.replayed.outcome] {
                #expect(run.calls == live.calls)
                #expect(run.status == 200)
                #expect(run.body.contains("/anything/"))
                #expect(run.proposed.count == 1)
            }
            #expect(runs.tape.interactions.count == 1)
            #expect(runs.tape.interactions[0].redirects.count == 1)
        }

        @Test func aRequestTheDelegateChangesIsSentAndMatchedLikeAnyOther() async throws {
            let runs = try await liveRecordReplay { id in
                let changed = try HTTPBin.url("/anything/\(id)-changed")
                return try await redirecting(id) { _, proposed in
                    var request = proposed
                    request.url = changed
                    return request
                }
            }
            // The server's log is in the order its threads finished writing, not the order requests came in.
            #expect(runs.live.served.count == 2)
            #expect(runs.live.served.contains { $0.contains("-changed") })
            #expect(runs.recorded.served.count == 2)
            #expect(runs.recorded.served.contains { $0.contains("-changed") })
            #expect(runs.replayed.served.isEmpty)
            for run in [runs.live.outcome, runs.recorded.outcome, runs.replayed.outcome] {
                #expect(run.status == 200)
                #expect(run.body.contains("-changed"))
            }
            #expect(runs.tape.interactions[0].redirects.last?.request.url.hasSuffix("-changed") == true)
        }

        @Test func aDelegateThatChangesItsMindOnReplayGetsTheRequestItAsksFor() async throws {
            let id = UUID().uuidString
            let folder = try TemporaryFolder()
            try await holdingCassettes {
                // Recorded following; replayed refusing: the 3xx is the outcome, and nothing is sent.
                _ = try await withCassette("mind", in: folder.path) { _ in try await redirecting(id) { $1 } }
                let before = try HTTPBin.settledRequestCount()
                let refused = try await withCassette("mind", in: folder.path, { $0.recordMode = .never }) { _ in
                    try await redirecting(id) { _, _ in nil }
                }
                #expect(refused.status == 302)
                #expect(refused.calls == ["willPerformHTTPRedirection", "didReceiveResponse", "didComplete"])
                // Recorded refusing, replayed following: the next request is not on the cassette.
                _ = try await withCassette("refused", in: folder.path) { _ in try await redirecting(id) { _, _ in nil } }
                let followed = try await withCassette("refused", in: folder.path, { $0.recordMode = .never }) { _ in
                    let delegate = AppDelegate()
                    let session = appSession(delegate: delegate)
                    defer { session.finishTasksAndInvalidate() }
                    let url = try HTTPBin.url("/redirect-to?url=%2Fanything%2F\(id)&status_code=302")
                    return await delegate.run(session.dataTask(with: url))
                }
                #expect((followed as? VCRError)?.code == .noMatch)
                #expect(VCR.takeFailures().first?.code == .noMatch)
                #expect(try HTTPBin.requests(since: before).filter { $0.contains(id) }.count == 1)  // the recording
            }
        }

        @Test func aHopTheDelegateNeverAnswersIsTapedAsFarAsItWentAndAskedAgainOnReplay() async throws {
            let folder = try TemporaryFolder()
            let id = UUID().uuidString.prefix(13)
            let url = try HTTPBin.url("/redirect-to?url=%2Fanything%2F\(id)&status_code=302")
            // The app never calls the completion handler: the load goes no further, and the cassette is saved with
            // what it got so far when it is ejected.
            func unanswered(_ mode: RecordMode) async throws -> [String] {
                let delegate = AppDelegate()
                delegate.answersRedirects = false
                let session = appSession(delegate: delegate)
                let task = session.dataTask(with: url)
                let calls = try await withCassette("unanswered-hop", in: folder.path, { $0.recordMode = mode }) { _ in
                    await withCheckedContinuation { asked in
                        delegate.onRedirect = { asked.resume() }
                        task.resume()
                    }
                    return delegate.calls
                }
                // Ejected with the load still waiting for the app.
                task.cancel()
                session.finishTasksAndInvalidate()
                return calls
            }
            try await holdingCassettes {
                let before = try HTTPBin.settledRequestCount()
                #expect(try await unanswered(.all) == ["willPerformHTTPRedirection"])
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("unanswered-hop.json")).tape
                #expect(tape.interactions.count == 1)
                #expect(tape.interactions.first?.redirects.first?.response.statusCode == 302)
                #expect(tape.interactions.first?.response == nil)
                #expect(tape.interactions.first?.error == nil, "cut off where the app left it, not cancelled")
                let served = try HTTPBin.requests(containing: String(id), since: before, atLeast: 1)
                #expect(try await unanswered(.never) == ["willPerformHTTPRedirection"])
                #expect(try HTTPBin.requestsFromAnyProcess(since: before).filter { $0.contains(id) } == served)
            }
        }

        @Test func aSessionWithoutADelegateFollowsRedirectsWithItsCookies() async throws {
            let session = appSession()
            let runs = try await liveRecordReplay { id in
                let (data, response) = try await session.data(from: try HTTPBin.url("/redirect-to?url=%2Fanything%2F\(id)"))
                return [(response as? HTTPURLResponse)?.statusCode ?? 0, data.count > 0 ? 1 : 0]
            }
            #expect(runs.live.outcome == [200, 1])
            #expect(runs.recorded.outcome == runs.live.outcome)
            #expect(runs.replayed.outcome == runs.live.outcome)
            #expect(runs.recorded.served.count == runs.live.served.count)
        }

        // MARK: Challenges

        /// A basic-auth request through a session whose delegate answers as told; the status and the challenges.
        func authenticating(
            _ id: String,
            session configure: (URLSessionConfiguration) -> Void = { _ in },
            answer: (@Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?))?
        ) async throws -> (status: Int?, error: URLError.Code?, body: String, challenges: [String], calls: [String]) {
            let delegate = AppDelegate()
            delegate.challenge = answer
            let session = appSession(delegate: delegate, configure)
            defer { session.finishTasksAndInvalidate() }
            let url = try HTTPBin.url("/basic-auth/user-\(id)/passwd")
            let error = await delegate.run(session.dataTask(with: url))
            return (
                (delegate.responses.last as? HTTPURLResponse)?.statusCode,
                (error as? URLError)?.code,
                String(decoding: delegate.body, as: UTF8.self),
                delegate.challenges.map {
                    "\($0.protectionSpace.authenticationMethod) \($0.protectionSpace.realm ?? "") \($0.previousFailureCount)"
                },
                delegate.calls
            )
        }

        @Test func aChallengeIsAnsweredByTheAppsDelegateRecordedAndReplayedOffline() async throws {
            let runs = try await liveRecordReplay { id in
                try await authenticating(id) { _ in (.useCredential, URLCredential(user: "user-\(id)", password: "passwd", persistence: .none)) }
            }
            let live = runs.live.outcome
            #expect(live.status == 200)
            #expect(live.body.contains("\"authenticated\": true"))
            #expect(live.challenges == ["\(NSURLAuthenticationMethodHTTPBasic) Fake Realm 0"])
            #expect(runs.live.served.count == 2)
            #expect(runs.recorded.served.count == 2)
            #expect(runs.replayed.served.isEmpty)
            for run in [runs.recorded.outcome, runs.replayed.outcome] {
                #expect(run.status == live.status)
                #expect(run.body.contains("\"authenticated\": true"))
                #expect(run.challenges == live.challenges)
                #expect(run.calls == live.calls)
            }
            // The 401, then the retry with its credential filtered as a secret.
            #expect(runs.tape.interactions.map { $0.response?.statusCode } == [401, 200])
            #expect(runs.tape.interactions[1].request.headers[field: "Authorization"] == "[FILTERED]")
            #expect(!String(decoding: try CassetteFile.encode(runs.tape, as: .json), as: UTF8.self).contains("dXNlci"))
        }

        @Test func aWrongCredentialIsAskedAboutAgainThenCancelled() async throws {
            let runs = try await liveRecordReplay { id in
                try await authenticating(id) { challenge in
                    challenge.previousFailureCount == 0
                        ? (.useCredential, URLCredential(user: "nobody", password: "wrong", persistence: .none))
                        : (.cancelAuthenticationChallenge, nil)
                }
            }
            #expect(runs.live.outcome.error == .cancelled)
            #expect(runs.live.outcome.challenges.count == 2)
            #expect(runs.recorded.served.count == runs.live.served.count)
            for run in [runs.recorded.outcome, runs.replayed.outcome] {
                #expect(run.error == .cancelled)
                #expect(run.challenges == runs.live.outcome.challenges)
            }
        }

        @Test func aChallengeNobodyAnswersEndsWithTheUnauthorizedResponse() async throws {
            let id = UUID().uuidString
            let folder = try TemporaryFolder()
            try await holdingCassettes {
                // corelibs before 6.3.2 waits forever here against the server: HTTPVCR ends with the 401 (6.3.2's
                // and Apple's outcome), recording and replaying.
                for mode in [RecordMode.all, .never] {
                    let outcome = try await withCassette("unanswered", in: folder.path, { $0.recordMode = mode }) { _ in
                        try await authenticating(id, answer: nil)
                    }
                    #expect(outcome.status == 401)
                    #expect(outcome.error == nil)
                    #expect(outcome.challenges.count == 1)
                }
                // Without a delegate, with a completion handler: the 401 and its challenge header, whole.
                for mode in [RecordMode.all, .never] {
                    let response = try await withCassette("no-delegate", in: folder.path, { $0.recordMode = mode }) { _ in
                        try await appSession().data(from: try HTTPBin.url("/basic-auth/user-\(id)/passwd")).1
                    }
                    let http = try #require(response as? HTTPURLResponse)
                    #expect(http.statusCode == 401)
                    #expect(http.value(forHTTPHeaderField: "WWW-Authenticate") == "Basic realm=\"Fake Realm\"")
                }
            }
        }
    }
}

/// What `body` returned or threw.
func outcome<Success>(_ body: () async throws -> Success) async -> Result<Success, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

extension Result {
    var error: Failure? {
        if case let .failure(error) = self { return error }
        return nil
    }
}
