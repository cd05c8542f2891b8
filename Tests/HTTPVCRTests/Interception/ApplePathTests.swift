import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// What differs between Apple's loader and corelibs', driven through ``LoaderDouble`` with each platform's
    /// implementation (``ApplePlatform``, ``CorelibsPlatform``) swapped in by protocol class.
    @Suite struct ApplePathTests {
        @Test(arguments: DoubledLoader.allCases)
        func chunksReachALoaderThatTakesThemOneByOne(_ loader: DoubledLoader) async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/stream/5")
            try await holdingCassettes {
                let recorded = try await withCassette("stream", in: folder.path) { _ in
                    await LoaderDouble(loader).load(URLRequest(url: url))
                }
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("stream.json")).tape
                let replayed = try await withCassette("stream", in: folder.path, { $0.recordMode = .never }) { _ in
                    await LoaderDouble(loader).load(URLRequest(url: url))
                }
                #expect(recorded.body == tape.interactions[0].body)
                #expect(replayed.body == tape.interactions[0].body)
                #expect(tape.interactions[0].chunks.count > 1, "httpbin sent /stream/5 in one piece")
                // Apple's loader hands every didLoad on; a corelibs task with no session behind it (this double)
                // is given the body in one piece.
                let expected = loader == .apple ? tape.interactions[0].chunks : [tape.interactions[0].body]
                #expect(recorded.chunks == expected)
                #expect(replayed.chunks == expected)
                // Every client call where the loader started the protocol, recording (the answer comes from the
                // recorder's session) as replaying: corelibs' task queue, Apple's loader thread.
                #expect(recorded.callsOffThread == 0)
                #expect(replayed.callsOffThread == 0)
            }
        }

        @Test(arguments: DoubledLoader.allCases)
        func cookiesGoWhereThePlatformKeepsThem(_ loader: DoubledLoader) async throws {
            let folder = try TemporaryFolder()
            let cookie = try SharedStorageCookie(prefix: "applepath-\(loader)")
            defer { cookie.forget() }
            let request = URLRequest(url: cookie.url)
            try await holdingCassettes {
                _ = try await withCassette("cookie", in: folder.path) { _ in await LoaderDouble(loader).load(request) }
                // Apple platforms: the shared storage, as stubbing libraries do (a protocol cannot see its session).
                // Linux: the session's own storage, read from the task; this double has none, so nothing is stored.
                #expect(try cookie.stored().count == (loader == .apple ? 1 : 0))
                cookie.forget()
                _ = try await withCassette("cookie", in: folder.path, { $0.recordMode = .never }) { _ in
                    await LoaderDouble(loader).load(request)
                }
                #expect(try cookie.stored().count == (loader == .apple ? 1 : 0), "replayed too")
            }
        }

        @Test func hopsAreReportedOnlyWhereTheLoaderTakesThemAndTheCassetteAsks() {
            #expect(!VCRConfiguration().reportsRedirectHops, "off by default")
            #expect(AppleLoaderProtocol.platform.redirectHandling == .reportToClient)
            #expect(AppleLoaderProtocol.redirectHandling(for: nil) == .followInProtocol, "not asked for")
            #if canImport(FoundationNetworking)
            #expect(VCRURLProtocol.platform.redirectHandling == .followInProtocol, "corelibs traps on a reported hop")
            #endif
        }

        /// On Linux every internal HTTPVCR relies on is where it expects: nothing degrades.
        @Test func theNativePlatformFindsEverythingItReliesOn() {
            #if canImport(FoundationNetworking)
            let internals = CorelibsPlatform.internals
            #expect(internals.degraded.isEmpty, "\(internals.degraded)")
            #expect(internals.taskSession != nil)
            #expect(internals.taskResponse != nil)
            #expect(internals.taskError != nil)
            #expect(internals.taskInlineCompletion != nil)
            #expect(internals.taskKnownBody != nil)
            #expect(internals.registryTable != nil)
            #expect(internals.protocolProperties != nil)
            #expect(internals.requestTimeoutIsSet != nil)
            #expect(internals.taskState != nil)
            #expect(internals.dispatch != nil)
            #expect(VCRURLProtocol.platform.attributesRequestsToTasks)
            #expect(VCRURLProtocol.platform.servesDownloads)
            #else
            #expect(!VCRURLProtocol.platform.attributesRequestsToTasks)
            #endif
        }

        /// The task's liveness is read without the lock of `state`'s getter: it must say what the getter says, before
        /// the task runs and while it is being cancelled (its completion handler runs before `.completed` is set).
        @Test func theTasksLivenessSaysWhatItsStateSays() async throws {
            #if canImport(FoundationNetworking)
            // Behind a lock: the handler runs on the session's queue, and the test reads what it saw.
            struct Seen {
                var task: URLSessionTask?
                var state: URLSessionTask.State?
                var isLive: Bool?
            }
            let platform = CorelibsPlatform()
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            let session = URLSession(configuration: configuration)
            defer { session.invalidateAndCancel() }
            let seen = Locked(Seen())
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                // Cancelled before it is resumed: its native protocol is made but never started, so only the
                // cancellation ends it. (Resumed, a refused connection can end it first, and corelibs then traps on the
                // cancellation's own failure: the race named by its skipped
                // test_noDoubleCallbackWhenCancellingAndProtocolFailsFast.)
                let task = session.dataTask(with: URL(string: "http://127.0.0.1:9/")!) { _, _, _ in
                    if let task = seen.withLock({ $0.task }) {
                        let (state, isLive) = (task.state, platform.isLive(task))
                        seen.withLock { ($0.state, $0.isLive) = (state, isLive) }
                    }
                    done.resume()
                }
                seen.withLock { $0.task = task }
                #expect(task.state == .suspended)
                #expect(platform.isLive(task))
                task.cancel()
            }
            #expect(seen.withLock { $0.state } == .canceling)
            #expect(seen.withLock { $0.isLive } == false)
            #endif
        }

        @Test func whatAPlatformLacksIsSaidOnceNamingWhatDegrades() {
            #expect(PlatformReport.message("loader", lacking: []) == nil)
            #expect(PlatformReport.message("loader", lacking: ["A.b: c degrades", "D.e: f degrades"])
                == "HTTPVCR: this loader lacks what HTTPVCR relies on, so it degrades: A.b: c degrades; D.e: f degrades.")
        }
    }
}
