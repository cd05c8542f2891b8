import Foundation

/// Runs an executable of this package as a user would, in a process of its own, and gives up on it after a
/// while: a scenario that hangs fails its test instead of hanging the run.
public enum Subprocess {
    public struct Result: CustomStringConvertible, Sendable {
        public var status: Int32
        public var output: String
        /// Killed after the timeout.
        public var timedOut: Bool

        public var description: String {
            "\(timedOut ? "timed out (killed)" : "exit \(status)")\n\(output)"
        }
    }

    public struct NotFound: Error, CustomStringConvertible {
        public var description: String
    }

    /// The package's executable `name`, built beside the test bundle (`swift build` puts both in the products
    /// folder, whatever `--scratch-path` says).
    public static func builtExecutable(_ name: String) throws -> URL {
        var starts: [URL] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: exe).deletingLastPathComponent())
        }
        if let main = Bundle.main.executableURL { starts.append(main.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            starts.append(bundle.bundleURL.deletingLastPathComponent())
        }
        for start in starts {
            var folder = start.standardizedFileURL
            for _ in 0..<4 {
                let candidate = folder.appendingPathComponent(name)
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isFolder), !isFolder.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate.path) {
                    return candidate
                }
                folder.deleteLastPathComponent()
            }
        }
        throw NotFound(description: "the \(name) executable was not found next to the test bundle: run "
            + "`swift build` first")
    }

    /// Runs `executable arguments…` with the tests' environment, its output (stdout and stderr) collected.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval
    ) throws -> Result {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("subprocess-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let timedOut = exited.wait(timeout: .now() + timeout) == .timedOut
        if timedOut {
            process.terminate()
            if exited.wait(timeout: .now() + 2) == .timedOut { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try handle.close()
        return Result(
            status: process.terminationStatus,
            output: String(decoding: try Data(contentsOf: output), as: UTF8.self),
            timedOut: timedOut
        )
    }
}
