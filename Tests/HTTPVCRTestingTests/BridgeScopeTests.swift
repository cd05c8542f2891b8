import Foundation
import HTTPBinTestSupport
@testable import HTTPVCRTesting
import Testing
import TestSupport

/// A `VCRBridge` started inside a test scope (what the `.cassette` trait runs) serves the launched process from
/// that test's cassette, and what goes wrong there is reported on that test (Docs/CrossProcess.md).
@Suite struct BridgeScopeTests {
    static func scope(_ name: String, in folder: TemporaryFolder, _ recordMode: RecordMode) -> VCRCassetteScope {
        var scope = VCRCassetteScope(
            suiteName: "Bridge", testName: name, cassettesPath: folder.path, sourceLocation: VCRSourceLocation(),
            configure: DogfoodServer.configure
        )
        scope.configure = { DogfoodServer.configure(&$0); $0.recordMode = recordMode }
        return scope
    }

    /// `bridge-child one BASE MARKER` launched with a bridge started in the current scope.
    static func child(_ marker: String) async throws -> TestProcess.Result {
        let bridge = try VCRBridge.start()
        defer { bridge.stop() }
        let base = DogfoodServer.url("/").absoluteString.dropLast()
        return try await TestProcess.run(
            try Subprocess.builtExecutable("bridge-child"), ["one", String(base), marker], environment: bridge.environment
        )
    }

    @Test func theScopesCassetteRecordsThenReplaysTheChildsRequest() async throws {
        let folder = TemporaryFolder()
        let recorded = try await withVCRCassette(Self.scope("child", in: folder, .once)) { try await Self.child("scope") }
        let replayed = try await withVCRCassette(Self.scope("child", in: folder, .never)) { try await Self.child("scope") }
        #expect(recorded.lines.first == "one: status 200 url \(DogfoodServer.url("/anything/one?marker=scope"))",
                "\(recorded)")
        #expect(replayed.stdout == recorded.stdout, "recorded:\n\(recorded)\nreplayed:\n\(replayed)")
    }

    @Test func aRequestTheScopesCassetteLacksIsReportedOnTheTest() async throws {
        let folder = TemporaryFolder()
        _ = try await withVCRCassette(Self.scope("lacking", in: folder, .once)) { try await Self.child("known") }
        let issues = Locked<[String]>([])
        let child = Locked<TestProcess.Result?>(nil)
        try await withKnownIssue {
            let result = try await withVCRCassette(Self.scope("lacking", in: folder, .never)) {
                try await Self.child("unknown")
            }
            child.withLock { $0 = result }
        } matching: { issue in
            issues.withLock { $0.append(issue.description) }
            return true
        }
        let result = child.withLock { $0 }
        #expect(result?.lines == ["one: error HTTPVCR.VCRError 4"], "\(String(describing: result))")
        let reported = issues.withLock { $0 }
        // The request it lacks, and the one it holds that the child never made: both on the test.
        #expect(reported.count == 2, "\(reported)")
        #expect(reported.first?.contains("No recorded request matches GET \(DogfoodServer.url("/anything/one?marker=unknown"))") == true,
                "\(reported)")
        #expect(reported.last?.contains("never came while the VCRBridge ran") == true, "\(reported)")
        #expect(reported.last?.contains("marker=known") == true, "\(reported)")
        #expect(reported.allSatisfy { $0.contains("test: Bridge/lacking") }, "\(reported)")
    }
}
