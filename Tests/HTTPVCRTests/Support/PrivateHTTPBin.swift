import Foundation
import HTTPVCR
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An httpbin of one test's own (gunicorn from the `.venv` that scripts/test set up, on a free port), so that the
/// test can stop it: the shared one must keep answering the other tests.
final class PrivateHTTPBin: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let url: URL
    private let process: Process
    private let exited: Exited

    private init(url: URL, process: Process, exited: Exited) {
        self.url = url
        self.process = process
        self.exited = exited
    }

    /// The package's root: this file is `<root>/Tests/HTTPVCRTests/Support/PrivateHTTPBin.swift`.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Starts it and returns once it accepts connections.
    static func start() async throws -> PrivateHTTPBin {
        let gunicorn = packageRoot.appendingPathComponent(".venv/bin/gunicorn")
        guard FileManager.default.isExecutableFile(atPath: gunicorn.path) else {
            throw Failure(description: "\(gunicorn.path) is missing: run the tests through scripts/test, which makes it")
        }
        let port = try freePort()
        let process = Process()
        // Through Python, which unblocks every signal before it becomes gunicorn: a process launched from a test
        // thread inherits that thread's mask, where SIGINT is blocked, and would ignore stop().
        process.executableURL = packageRoot.appendingPathComponent(".venv/bin/python")
        process.arguments = [
            "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
            gunicorn.path, "--bind", "127.0.0.1:\(port)", "--workers", "1", "--threads", "8", "httpbin:app",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let exited = Exited()
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let server = PrivateHTTPBin(url: URL(string: "http://127.0.0.1:\(port)")!, process: process, exited: exited)
        // Ready once it accepts: asked every 50 ms for up to 30 s (gunicorn gives no other sign).
        for _ in 0..<600 {
            if Self.accepts(port: port) { return server }
            if exited.hasExited { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        await server.stop()
        throw Failure(description: "the private httpbin on port \(port) never accepted a connection")
    }

    /// Stops it (SIGINT: gunicorn's quick shutdown) and returns once it has exited: nothing listens on its port then.
    func stop() async {
        kill(process.processIdentifier, SIGINT)
        await exited.wait()
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func accepts(port: UInt16) -> Bool {
        let socket = Loopback.tcpSocket()
        defer { close(socket) }
        return Loopback.connect(socket, port: port) == 0
    }

    private static func freePort() throws -> UInt16 {
        let socket = Loopback.tcpSocket()
        defer { close(socket) }
        guard Loopback.bind(socket, port: 0) == 0 else { throw Failure(description: "no free port") }
        return Loopback.port(of: socket)
    }

    /// The process's exit, awaited through a continuation.
    private final class Exited: @unchecked Sendable {
        private let lock = NSLock()
        private var exited = false
        private var waiters: [CheckedContinuation<Void, Never>] = []

        var hasExited: Bool { lock.withLock { exited } }

        func signal() {
            let waiting = lock.withLock { exited = true; defer { waiters = [] }; return waiters }
            for waiter in waiting { waiter.resume() }
        }

        func wait() async {
            await withCheckedContinuation { continuation in
                let now = lock.withLock { exited ? true : { waiters.append(continuation); return false }() }
                if now { continuation.resume() }
            }
        }
    }
}
