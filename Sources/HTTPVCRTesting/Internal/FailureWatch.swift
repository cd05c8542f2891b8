import Foundation
import HTTPVCR
import Testing

/// Whether a Swift Testing test failed in a scope: an expectation, a recorded issue or a thrown error, not only
/// what the body throws. Its cassette then keeps nothing it recorded, unless `recordsOnFailure` says otherwise.
final class FailureWatch: Sendable {
    private let sawFailure = Locked(false, level: .testing)

    var failed: Bool { sawFailure.withLock { $0 } }

    /// Runs `function`, watching the issues it records (through an issue-handling trait, which sees them all).
    func watching(
        test: Test,
        testCase: Test.Case?,
        _ function: @Sendable () async throws -> Void
    ) async throws {
        #if compiler(>=6.2)
        let handler: IssueHandlingTrait = .compactMapIssues { [sawFailure] issue in
            if issue.failsTest { sawFailure.withLock { $0 = true } }
            return issue
        }
        try await handler.provideScope(for: test, testCase: testCase, performing: function)
        #else
        try await function()
        #endif
    }
}
