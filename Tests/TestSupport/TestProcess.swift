import Foundation

/// A process a test launches and awaits without holding a thread of the cooperative pool: its exit arrives through
/// `terminationHandler` and a continuation.
///
/// Its output goes to files, not pipes: corelibs' `Process` closes the other descriptors in a child by listing the
/// open ones before it spawns, so a pipe another test opens meanwhile can leak into that child, and a reader waiting
/// for the pipe's end waits as long as that unrelated child lives (two of these tests, each launching a child and an
/// httpbin, once waited on each other for good). A file needs no end: it is read once the process exited.
public struct TestProcess: Sendable {
    public struct Result: Sendable, CustomStringConvertible {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
        public var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
    }

    /// Runs `executable arguments…` with the test process's environment plus `environment`, and returns once it
    /// exited. Killed after `timeout`, so that a hang fails the test instead of the run.
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String] = [:],
        timeout: TimeInterval = 60
    ) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("launched-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outURL = folder.appendingPathComponent("stdout"), errURL = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let exited = Locked(false)
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in
                exited.withLock { $0 = true }
                continuation.resume(returning: process.terminationStatus)
            }
            do {
                try process.run()
            } catch {
                return continuation.resume(throwing: error)
            }
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                if !exited.withLock({ $0 }) { kill(pid, SIGKILL) }
            }
        }
        try out.close()
        try err.close()
        return Result(
            status: status,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        )
    }
}

/// A value behind a lock, for the closures above.
private final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}
