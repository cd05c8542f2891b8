import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPBinTestSupport
@testable import HTTPVCRTesting
import Testing

/// Which cassette a request goes to when it is not made from the test's own task, where HTTPVCR cannot trace it
/// back to a test: refused by a cassette bound to its test's task, served by one that runs alone (`exclusive`).
@Suite(.timeLimit(.minutes(2)))
struct AttributionTests {
    static func scope(_ name: String, in folder: TemporaryFolder, exclusive: Bool = false) -> VCRCassetteScope {
        var scope = VCRCassetteScope(name, cassettesPath: folder.path, configure: DogfoodServer.configure)
        scope.isExclusive = exclusive
        return scope
    }

    /// What a completion handler gets for `url`, the task resumed by `start`.
    static func outcome(of url: URL, startedBy start: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void)
        async -> (status: Int?, error: (any Error)?) {
        await withCheckedContinuation { continuation in
            start {
                URLSession.shared.dataTask(with: url) { _, response, error in
                    continuation.resume(returning: ((response as? HTTPURLResponse)?.statusCode, error))
                }.resume()
            }
        }
    }

    @Test func aTaskStartedInsideTheTestKeepsItsCassette() async throws {
        let folder = TemporaryFolder()
        let url = DogfoodServer.url("/anything/attribution/child-task")
        try await withVCRCassette(Self.scope("child-task", in: folder)) {
            let (_, response) = try await Task { try await URLSession.shared.data(from: url) }.value
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(VCR.cassette?.requests.compactMap(\.url) == [url])
        }
    }

    @Test(arguments: ["DispatchQueue", "Task.detached"])
    func aRequestFromOutsideTheTestIsRefusedNotGuessed(startedFrom origin: String) async throws {
        let folder = TemporaryFolder()
        let url = DogfoodServer.url("/anything/attribution/\(origin)")
        let before = try HTTPBin.settledRequestCount()
        try await withVCRCassette(Self.scope("outside-\(origin)", in: folder)) {
            let (status, error) = await Self.outcome(of: url) { resume in
                if origin == "DispatchQueue" {
                    DispatchQueue.global().async { resume() }
                } else {
                    Task.detached { resume() }
                }
            }
            if VCR.attributesRequestsToTasks {
                #expect(status == nil)
                let refusal = try #require(error as? VCRError, "\(String(describing: error))")
                #expect(refusal.code == .unattributedRequest)
                #expect(refusal.message.contains("cannot tell which test made GET \(url.absoluteString)"), "\(refusal)")
                #expect(refusal.message.contains(origin == "DispatchQueue" ? "outside any Swift task" : "Task.detached"))
                #expect(refusal.message.contains(".cassette(exclusive: true)"))
                #expect(VCR.cassette?.requests.isEmpty == true, "nothing recorded")
            } else {
                // Where requests cannot be traced to tasks, a scope has the process to itself and takes them.
                #expect(status == 200)
            }
        }
        if VCR.attributesRequestsToTasks {
            #expect(try HTTPBin.requests(since: before, to: [url.path]).isEmpty, "never sent")
        }
    }

    /// `VCR.data(for:sending:)` follows the same rules as URLSession.
    @Test func theDoorForOtherClientsGoesToTheTestsCassetteAndRefusesADetachedTask() async throws {
        let folder = TemporaryFolder()
        let url = DogfoodServer.url("/anything/attribution/door")
        let plain = URLSession(configuration: .ephemeral)
        let send: @Sendable (URLRequest) async throws -> (Data, HTTPURLResponse) = { request in
            let (data, response) = try await plain.data(for: request)
            return (data, response as! HTTPURLResponse)
        }
        try await withVCRCassette(Self.scope("door", in: folder)) {
            let (_, response) = try await VCR.data(for: URLRequest(url: url), sending: send)
            #expect(response.statusCode == 200)
            #expect(VCR.cassette?.requests.compactMap(\.url) == [url])
            guard VCR.attributesRequestsToTasks else { return }
            let detached = await Task.detached { () -> VCRError? in
                do {
                    _ = try await VCR.data(for: URLRequest(url: url), sending: send)
                    return nil
                } catch {
                    return error as? VCRError
                }
            }.value
            #expect(detached?.code == .unattributedRequest)
        }
    }

    /// Two scopes at once, one of them with a request its cassette does not have: the failure names that scope's
    /// cassette and test, and the other scope reports nothing.
    @Test func aFailureLandsOnTheScopeWhoseRequestFailed() async throws {
        let folder = TemporaryFolder()
        func scope(_ name: String, recordMode: RecordMode) -> VCRCassetteScope {
            var scope = VCRCassetteScope(
                suiteName: "Parallel", testName: name, cassettesPath: folder.path, sourceLocation: VCRSourceLocation(),
                configure: DogfoodServer.configure
            )
            scope.configure = { DogfoodServer.configure(&$0); $0.recordMode = recordMode }
            return scope
        }
        func fetch(_ path: String) async throws { _ = try await URLSession.shared.data(from: DogfoodServer.url(path)) }
        for name in ["passes", "fails"] {
            try await withVCRCassette(scope(name, recordMode: .once)) { try await fetch("/anything/\(name)") }
        }
        let issues = Locked<[String]>([])
        try await withKnownIssue {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await withVCRCassette(scope("passes", recordMode: .never)) { try await fetch("/anything/passes") } }
                group.addTask { try await withVCRCassette(scope("fails", recordMode: .never)) { try? await fetch("/anything/other") } }
                try await group.waitForAll()
            }
        } matching: { issue in
            issues.withLock { $0.append(issue.text) }
            return true
        }
        let reported = issues.withLock { $0 }
        #expect(reported.count == 1, "\(reported)")
        #expect(reported.first?.contains("No recorded request matches GET \(DogfoodServer.url("/anything/other"))") == true)
        #expect(reported.first?.contains("cassette: \(folder.path)/fails.json") == true, "\(reported)")
        #expect(reported.first?.contains("test: Parallel/fails") == true, "\(reported)")
    }

    @Test func anExclusiveScopeTakesRequestsFromOutsideTheTest() async throws {
        let folder = TemporaryFolder()
        let url = DogfoodServer.url("/anything/attribution/exclusive")
        try await withVCRCassette(Self.scope("exclusive", in: folder, exclusive: true)) {
            #expect(VCR.cassette?.isBoundToTask == false, "inserted for the process")
            let (status, error) = await Self.outcome(of: url) { resume in DispatchQueue.global().async { resume() } }
            #expect(status == 200 && error == nil, "\(String(describing: error))")
        }
        let saved = try String(contentsOf: folder.url.appendingPathComponent("exclusive.json"), encoding: .utf8)
        #expect(saved.contains("/anything/attribution/exclusive"))
    }

    @Test(.cassette(exclusive: true))
    func theTraitTakesExclusive() throws {
        let cassette = try #require(VCR.cassette)
        #expect(!cassette.isBoundToTask)
        #expect(VCRActiveCassette.current?.scope.isExclusive == true)
    }
}
