import Foundation
import Testing

/// Runs `body` inside the current test and returns the issues it recorded (warnings too), none of which reach the
/// test: for tests whose subject is what a scope reports.
func issuesRecorded(by body: @Sendable () async throws -> Void) async throws -> [Issue] {
    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Issue] = []
        func append(_ issue: Issue) { lock.lock(); list.append(issue); lock.unlock() }
        var issues: [Issue] { lock.lock(); defer { lock.unlock() }; return list }
    }
    let test = try #require(Test.current)
    let collected = Collected()
    let handler: IssueHandlingTrait = .compactMapIssues { issue in
        collected.append(issue)
        return nil
    }
    try await handler.provideScope(for: test, testCase: Test.Case.current, performing: body)
    return collected.issues
}
