import Foundation
import TestSupport

/// A process a test launches and awaits without holding a thread of the cooperative pool: its exit arrives through
/// `terminationHandler`, its output through `readabilityHandler`, and the test resumes once all three are in.
struct LaunchedProcess: Sendable {
    struct Result: Sendable, CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
        var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
    }

    /// Runs `executable arguments…` with the test process's environment plus `environment`, and returns once it
    /// exited and closed its output. Killed after `timeout`, so that a hang fails the test instead of the run.
    static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String] = [:],
        timeout: TimeInterval = 60
    ) async throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        let collected = Collected()
        return try await withCheckedThrowingContinuation { continuation in
            collected.whenDone { continuation.resume(returning: $0) }
            for (pipe, isOut) in [(stdout, true), (stderr, false)] {
                pipe.fileHandleForReading.readabilityHandler = { handle in
                    let data = handle.availableData
                    if data.isEmpty { handle.readabilityHandler = nil }
                    collected.received(data, isOut: isOut)
                }
            }
            process.terminationHandler = { process in collected.exited(process.terminationStatus) }
            do {
                try process.run()
            } catch {
                for pipe in [stdout, stderr] { pipe.fileHandleForReading.readabilityHandler = nil }
                collected.whenDone { _ in }
                return continuation.resume(throwing: error)
            }
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                if !collected.isDone { kill(pid, SIGKILL) }
            }
        }
    }

    /// Output and exit status, handed over once the exit and both ends of output are in.
    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var out = Data(), err = Data()
        private var status: Int32?
        private var openOutputs = 2
        private var done: ((Result) -> Void)?
        private var finished = false

        var isDone: Bool { lock.withLock { finished } }

        func whenDone(_ action: @escaping (Result) -> Void) { lock.withLock { done = action } }

        func received(_ data: Data, isOut: Bool) {
            update {
                if data.isEmpty { openOutputs -= 1 } else if isOut { out.append(data) } else { err.append(data) }
            }
        }

        func exited(_ status: Int32) { update { self.status = status } }

        private func update(_ change: () -> Void) {
            let ready: (((Result) -> Void), Result)? = lock.withLock {
                change()
                guard !finished, openOutputs == 0, let status, let done else { return nil }
                finished = true
                return (done, Result(
                    status: status, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self)
                ))
            }
            if let (done, result) = ready { done(result) }
        }
    }
}
