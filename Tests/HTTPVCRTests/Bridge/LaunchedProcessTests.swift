import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import HTTPVCR
import Testing
import TestSupport

/// Real child processes (sh, sleep, env, python3): output in files, signals that reach them, waits that need no
/// thread of the cooperative pool, the ports they listen on. Each test ends its own children, and only those.
@Suite struct LaunchedProcessTests {
    static func launch(_ path: String, _ arguments: [String],
                       environment: [String: String] = ProcessInfo.processInfo.environment) throws -> LaunchedProcess {
        try LaunchedProcess.launch(URL(fileURLWithPath: path), arguments: arguments, environment: environment)
    }

    static func shell(_ script: String, _ arguments: String...) throws -> LaunchedProcess {
        try launch("/bin/sh", ["-c", script, "sh"] + arguments)
    }

    /// Runs blocking work on a thread of its own, not on the cooperative pool the other suites share.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// The exit status, waited for on a thread of its own; nil when the process still runs after `seconds`.
    static func status(of process: LaunchedProcess, within seconds: TimeInterval = 10) async throws -> Int32? {
        try await onOwnThread { process.waitForExit(timeout: seconds) }
    }

    struct NotPrinted: Error, CustomStringConvertible {
        var description: String
    }

    /// The output once it holds `text`, what the child prints when it is ready. Read again until then: a file has
    /// no event to wait for.
    static func output(of process: LaunchedProcess, containing text: String) async throws -> String {
        let deadline = Date() + 20
        while true {
            let running = process.isRunning
            let output = process.output()
            if output.contains(text) { return output }
            guard running, Date() < deadline else {
                let status = process.exitStatus.map(String.init) ?? "none yet"
                throw NotPrinted(description: "no '\(text)' in \(output.debugDescription), "
                    + "stderr \(process.errorOutput().debugDescription), exit status \(status)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits on a semaphore from synchronous code: the blockers below hold pool threads on purpose.
    static func block(on semaphore: DispatchSemaphore) {
        semaphore.wait()
    }

    /// Whether `pid` has ended: gone, or a zombie its new parent has not reaped (this container's init may not).
    static func isGone(_ pid: Int32) -> Bool {
        if kill(pid, 0) != 0 { return true }
        guard let bytes = ListeningPorts.readFile("/proc/\(pid)/stat") else { return false }
        let stat = String(decoding: bytes, as: UTF8.self)
        guard let close = stat.lastIndex(of: ")") else { return false }
        return stat[close...].dropFirst().trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    // MARK: Output and status

    @Test func outputGoesToFilesOfItsOwn() async throws {
        let process = try Self.shell("echo hello; echo oops >&2")
        defer { process.terminate() }
        #expect(try await Self.status(of: process) == 0)
        #expect(await process.waitForExit() == 0)
        #expect(process.output() == "hello\n")
        #expect(process.errorOutput() == "oops\n")
        #expect(try String(contentsOf: process.standardError, encoding: .utf8) == "oops\n")
        #expect(process.standardOutput.lastPathComponent == "sh.stdout")
        #expect(!process.isRunning && process.exitStatus == 0 && process.terminationSignal == nil)
    }

    @Test func exitStatusIsTheChildsOwn() async throws {
        let process = try Self.shell("exit 7")
        defer { process.terminate() }
        #expect(await process.waitForExit() == 7)
        #expect(process.terminationSignal == nil)
    }

    @Test func environmentIsExactlyTheOneGiven() async throws {
        let process = try Self.launch("/usr/bin/env", [], environment: ["ONLY": "this one"])
        defer { process.terminate() }
        #expect(try await Self.status(of: process) == 0)
        #expect(process.output() == "ONLY=this one\n")
    }

    @Test func standardInputIsEmpty() async throws {
        let process = try Self.shell("cat; echo end")
        defer { process.terminate() }
        #expect(try await Self.status(of: process) == 0)
        #expect(process.output() == "end\n")
    }

    @Test func blockingWaitGivesUpAfterItsTimeout() async throws {
        let process = try Self.launch("/bin/sleep", ["600"])
        defer { process.terminate() }
        #expect(try await Self.status(of: process, within: 0.2) == nil)
        #expect(process.isRunning && process.exitStatus == nil)
    }

    // MARK: Signals

    /// The child is launched from a thread that blocks SIGTERM and SIGINT; the mask would pass through exec, and
    /// the shell's trap would never run.
    @Test func terminateReachesAChildLaunchedWithSIGTERMBlocked() async throws {
        let script = "trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 0.1; done"
        let process = try await Self.onOwnThread {
            var blocked = sigset_t(), previous = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            sigaddset(&blocked, SIGINT)
            pthread_sigmask(SIG_BLOCK, &blocked, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            return try Self.shell(script)
        }
        defer { process.terminate() }
        _ = try await Self.output(of: process, containing: "ready")
        process.terminate()
        #expect(try await Self.status(of: process) == 3)
        #expect(process.output().contains("got-term"))
    }

    /// An ignored signal stays ignored through exec. SIGHUP is ignored here for the moment of the launch: the whole
    /// test process's disposition, but nothing in a test run expects a hangup.
    @Test func aSignalTheRunnerIgnoresIsDefaultInTheChild() async throws {
        var ignore = sigaction(), previous = sigaction()
        #if canImport(Glibc)
        ignore.__sigaction_handler.sa_handler = SIG_IGN
        #else
        ignore.__sigaction_u.__sa_handler = SIG_IGN
        #endif
        sigaction(SIGHUP, &ignore, &previous)
        let launched = Result { try Self.launch("/bin/sleep", ["600"]) }
        sigaction(SIGHUP, &previous, nil)
        let process = try launched.get()
        defer { process.terminate() }
        kill(process.pid, SIGHUP)
        #expect(try await Self.status(of: process) == 128 + SIGHUP)
        #expect(process.terminationSignal == SIGHUP)
    }

    @Test func interruptEndsAProcessWithSIGINT() async throws {
        let process = try Self.launch("/bin/sleep", ["600"])  // ended by the test, never by its own end
        defer { process.terminate() }
        process.interrupt()
        #expect(try await Self.status(of: process) == 130)
        #expect(process.terminationSignal == SIGINT)
    }

    /// The shell and its background sleep both ignore SIGTERM: after the grace, SIGKILL ends the whole group, the
    /// grandchild too. terminate() itself returns at once.
    @Test func terminateEscalatesToSIGKILLForTheWholeGroup() async throws {
        let process = try Self.shell("trap '' TERM; sleep 600 & echo \"ready $!\"; wait")
        defer { process.terminate() }
        let ready = try await Self.output(of: process, containing: "\n")
        let grandchild = try #require(Int32(ready.dropFirst("ready ".count).dropLast()))
        let started = Date()
        process.terminate()
        #expect(Date().timeIntervalSince(started) < 0.5, "terminate() waited for the grace")
        // Timed on the waiting thread, not when this test resumes: under ThreadSanitizer other suites hold the
        // cooperative pool for a minute or more.
        let (status, elapsed) = try await Self.onOwnThread {
            (process.waitForExit(timeout: 60), Date().timeIntervalSince(started))
        }
        #expect(status == 137)
        #expect(process.terminationSignal == SIGKILL)
        // Not before the grace; the upper bound only guards against a hang.
        #expect(elapsed > LaunchedProcess.terminationGrace - 0.5 && elapsed < 60, "ended after \(elapsed) s")
        // Killed with the shell, it may take a moment to die: there is no event to wait for.
        let deadline = Date() + 5
        while !Self.isGone(grandchild) && Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(Self.isGone(grandchild), "the grandchild \(grandchild) outlived the group's SIGKILL")
    }

    /// Blockers hold every thread of the cooperative pool while the child is interrupted: the blocking wait, on a
    /// thread of its own, still sees the exit, and the task suspended in the async wait resumes once the pool is
    /// free again.
    @Test func waitingNeedsNoThreadOfTheCooperativePool() async throws {
        try await PoolHolding.inTurn {
            let process = try Self.launch("/bin/sleep", ["600"])
            defer { process.terminate() }
            let asyncStatus = Locked<Int32?>(nil)
            let waiterStarted = DispatchSemaphore(value: 0), waiterResumed = DispatchSemaphore(value: 0)
            Task.detached {
                waiterStarted.signal()
                let status = await process.waitForExit()
                asyncStatus.withLock { $0 = status }
                waiterResumed.signal()
            }
            let width = ProcessInfo.processInfo.activeProcessorCount
            let (poolHeld, statusWhileHeld) = try await Self.onOwnThread { () -> (Bool, Int32?) in
                // Other tests' synchronous work can hold the pool's threads for minutes under ThreadSanitizer.
                _ = waiterStarted.wait(timeout: .now() + 600)
                let gate = DispatchSemaphore(value: 0), running = DispatchSemaphore(value: 0)
                // A semaphore, not a condition: a blocker that starts after the release passes straight through.
                defer { for _ in 0..<width { gate.signal() } }
                for _ in 0..<width {
                    Task.detached {
                        running.signal()
                        Self.block(on: gate)
                    }
                }
                // All blockers running: every pool thread is held, so the waiter task, which holds its thread until it
                // suspends in waitForExit(), has suspended.
                // Other tests' synchronous work can hold a thread for many seconds before a blocker gets it (minutes
                // under ThreadSanitizer).
                let deadline = DispatchTime.now() + 600
                for _ in 0..<width where running.wait(timeout: deadline) == .timedOut {
                    return (false, nil)
                }
                process.interrupt()
                return (true, process.waitForExit(timeout: 10))
            }
            #expect(poolHeld, "the blockers did not all start: the pool is wider than \(width) threads, or was held")
            #expect(statusWhileHeld == 130)
            let resumed = try await Self.onOwnThread { waiterResumed.wait(timeout: .now() + 10) == .success }
            #expect(resumed)
            #expect(asyncStatus.withLock { $0 } == 130)
        }
    }

    // MARK: Ending what is left

    /// `endAll()` would end the other tests' processes too: the test asks for its own only.
    @Test func endAllKillsTheLaunchedProcessesStillRunning() async throws {
        let process = try Self.launch("/bin/sleep", ["600"])
        defer { process.terminate() }
        LaunchedProcess.endAll { $0 === process }
        #expect(try await Self.status(of: process) == 137)
        #expect(process.terminationSignal == SIGKILL)
    }

    @Test func aMissingExecutableThrowsNamingIt() throws {
        let path = "/nonexistent/HTTPVCR-missing-\(UUID().uuidString)"
        let error = try #require(throws: LaunchedProcess.LaunchError.self) { try Self.launch(path, []) }
        #expect(error.description.contains(path))
        #expect(error.errorNumber == ENOENT)
    }

    @Test func aFileThatIsNotExecutableThrows() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("not-executable-\(UUID().uuidString)")
        try Data("#!/bin/sh\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = try #require(throws: LaunchedProcess.LaunchError.self) { try Self.launch(file.path, []) }
        #expect(error.description.contains(file.path))
        #expect(error.errorNumber == EACCES)
    }

    // MARK: Listening ports

    enum Family: String, CaseIterable, CustomTestStringConvertible {
        case leader, wrappedInItsGroup, wrappedInAGroupOfItsOwn
        var testDescription: String { rawValue }
    }

    /// A python server on a free port, launched itself or under `sh -c`, in the wrapper's group or one of its own
    /// (found as a descendant). It prints its port and pid once it listens, and listens until the test ends it. The
    /// test listens on a port of its own first, which the child must not be seen to hold (the child does not inherit
    /// the test's descriptors).
    @Test(arguments: Family.allCases)
    func listeningPortsFindsTheServersPort(_ family: Family) async throws {
        let own = Loopback.tcpSocket()
        defer { close(own) }
        try #require(Loopback.bind(own, port: 0) == 0 && Loopback.listen(own, backlog: 1) == 0)
        let ownPort = Loopback.port(of: own)

        let server = """
            import os, socket, sys, time
            if sys.argv[1] == "own-group": os.setpgrp()
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen()
            print(s.getsockname()[1], os.getpid(), flush=True)
            time.sleep(3600)  # until the test ends it: on a starved machine a minute passed before the check
            """
        let process = switch family {
        case .leader: try Self.launch("/usr/bin/env", ["python3", "-c", server, "group"])
        case .wrappedInItsGroup: try Self.shell("python3 -c \"$1\" group; exit $?", server)
        case .wrappedInAGroupOfItsOwn: try Self.shell("python3 -c \"$1\" own-group; exit $?", server)
        }
        defer { process.terminate() }
        let line = try await Self.output(of: process, containing: "\n").split(separator: " ")
        let port = try #require(line.first.flatMap { UInt16($0) })
        let serverPid = try #require(line.last.flatMap { Int32($0.dropLast()) })
        // Outside the group, terminate() does not reach it.
        defer { if family == .wrappedInAGroupOfItsOwn { kill(serverPid, SIGKILL) } }

        let ports = process.listeningPorts
        #expect(ports.contains(port), "\(ports) lacks \(port)")
        #expect(!ports.contains(ownPort), "\(ports) holds the test's own port \(ownPort)")
        #expect(LaunchedProcess.listening(onPort: port) === process)
        #expect(LaunchedProcess.listening(onPort: ownPort) == nil)
        if family == .leader {
            process.terminate()
            #expect(try await Self.status(of: process) == 143)
            #expect(process.listeningPorts.isEmpty)
        }
    }

    // MARK: Reading /proc

    @Test func statIsReadAfterTheLastParenthesis() {
        let entry = ListeningPorts.parseStat("42 (a) (b c) S 7 42 42 0 -1 4194560", pid: 42)
        #expect(entry?.parent == 7 && entry?.group == 42)
        #expect(ListeningPorts.parseStat("42 (no close S 7 42", pid: 42) == nil)
    }

    static func bytes(_ line: String) -> ArraySlice<UInt8> {
        ArraySlice(line.utf8)
    }

    @Test func onlyListeningSocketsALoopbackRequestReachesCount() throws {
        try #require(1.littleEndian == 1, "the /proc lines below are a little-endian machine's")
        let line = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 123 1"
        let parsed = ListeningPorts.parseListeningLine(Self.bytes(line))
        #expect(parsed?.port == 8080 && parsed?.inode == 123)
        let any = line.replacingOccurrences(of: "0100007F", with: "00000000")
        #expect(ListeningPorts.parseListeningLine(Self.bytes(any))?.port == 8080)
        let lan = line.replacingOccurrences(of: "0100007F", with: "0101A8C0")  // 192.168.1.1
        #expect(ListeningPorts.parseListeningLine(Self.bytes(lan)) == nil)
        let connected = line.replacingOccurrences(of: " 0A ", with: " 01 ")
        #expect(ListeningPorts.parseListeningLine(Self.bytes(connected)) == nil)
        let v6 = line.replacingOccurrences(of: "0100007F", with: "00000000000000000000000001000000")  // ::1
        #expect(ListeningPorts.parseListeningLine(Self.bytes(v6))?.port == 8080)
        let mapped = line.replacingOccurrences(of: "0100007F", with: "0000000000000000FFFF00000100007F")
        #expect(ListeningPorts.parseListeningLine(Self.bytes(mapped))?.port == 8080)
        let v6Lan = line.replacingOccurrences(of: "0100007F", with: "000080FE000000000000000001000000")  // fe80::1
        #expect(ListeningPorts.parseListeningLine(Self.bytes(v6Lan)) == nil)
    }
}
