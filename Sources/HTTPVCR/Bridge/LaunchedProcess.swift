import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process a test launched (the server under test, say), that the test can wait for and end without hanging.
///
/// Three things go wrong with a child process in a test run, and this handle is built against each:
///
/// - Waiting blocks. ``waitForExit()`` suspends without holding a thread of Swift's cooperative pool: each process
///   has a thread of its own that waits for it and resumes the waiting tasks. Tests often block that pool (it has one
///   thread a core), and a wait that needs it would wait for good.
/// - A test that throws leaves its child running. The output goes to files, never to pipes, so a child that outlives
///   its test holds nothing `swift test` waits for; and when the test process exits, every launched process group
///   still running is killed.
/// - A child inherits its parent's signal state. The test runner may ignore or block SIGTERM and SIGINT; the child
///   starts with every signal at its default action and none blocked, so ``terminate()`` and ``interrupt()`` reach it.
///
/// Each process leads a process group of its own, and the signals go to that group: a wrapper (`swift run`, `sh -c`)
/// ends together with what it started. What a process leaves running in its group when it exits is killed 2 seconds
/// later.
///
/// ```swift
/// let server = try bridge.launch(serverExecutable, arguments: ["--port", "0"])
/// defer { server.terminate() }
/// // … talk to the server …
/// server.terminate()
/// let status = await server.waitForExit()
/// print(server.output())
/// ```
public final class LaunchedProcess: Sendable {
    /// The process's id; also the id of the process group it leads.
    public let pid: Int32
    /// The file that was launched.
    public let executable: URL
    /// The file the process's standard output goes to, in a temporary folder of its own. It is removed with this
    /// handle: read it (``output()``) while you hold the handle.
    public let standardOutput: URL
    /// The file the process's standard error goes to, beside ``standardOutput``.
    public let standardError: URL

    /// How long ``terminate()`` lets the process group end after SIGTERM before it sends SIGKILL.
    package static let terminationGrace: TimeInterval = 2

    private let state = Locked(State(), level: .leaf)
    /// Left once the process has exited and its status is recorded: what blocking waiters wait for.
    private let exited = DispatchGroup()

    private struct State {
        var exitStatus: Int32?
        var terminationSignal: Int32?
        /// Members of the group were still alive when its leader was reaped: signals still go to the group.
        var groupOutlivedLeader = false
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }

    /// Whether the process has not exited yet.
    public var isRunning: Bool {
        state.withLock { $0.exitStatus == nil }
    }

    /// The exit status once the process has exited, `nil` while it runs. A process ended by a signal has the shell's
    /// status for it, 128 + the signal (143 for SIGTERM, 137 for SIGKILL), and ``terminationSignal`` says which.
    /// -1 when the status was lost: something else in the test process reaped the child (a SIGCHLD handler, or
    /// SIGCHLD ignored).
    public var exitStatus: Int32? {
        state.withLock { $0.exitStatus }
    }

    /// The signal that ended the process, `nil` while it runs or when it exited by itself.
    public var terminationSignal: Int32? {
        state.withLock { $0.terminationSignal }
    }

    init(pid: Int32, executable: URL, standardOutput: URL, standardError: URL) {
        self.pid = pid
        self.executable = executable
        self.standardOutput = standardOutput
        self.standardError = standardError
        exited.enter()
    }

    deinit {
        Self.removeOutputFolder(standardOutput.deletingLastPathComponent())
    }

    // MARK: Ending

    /// Asks the process group to end: SIGTERM now, SIGKILL after a grace of 2 seconds to whatever of the group is
    /// still alive. Returns at once; ``waitForExit()`` waits for the end.
    ///
    /// Calling it on a process that has exited does nothing, so it suits a `defer`:
    ///
    /// ```swift
    /// let server = try bridge.launch(serverExecutable, arguments: [])
    /// defer { server.terminate() }
    /// ```
    public func terminate() {
        guard signalGroup(SIGTERM) else { return }
        // The grace on a thread of its own, not a dispatch timer: on Linux the global queues share their threads
        // with the cooperative pool, and a timer's handler waits behind the tasks holding them (a 2 s grace took 8).
        // If the process exits in time, its waiter deals with what is left of the group.
        Thread { [self] in
            if exited.wait(timeout: .now() + Self.terminationGrace) == .timedOut { signalGroup(SIGKILL) }
        }.start()
    }

    /// Sends SIGINT to the process group, as Control-C in a terminal does. A process that does not handle it ends
    /// with status 130.
    public func interrupt() {
        signalGroup(SIGINT)
    }

    /// Sends `signal` to the group the process leads, or to the process alone if it left that group. Only while the
    /// pid is still ours: the lock is the one the waiter reaps under, so a reaped (and maybe reused) pid is never
    /// signalled. A group that outlived its leader is, until it is killed: its id is not reused while a member lives.
    @discardableResult
    private func signalGroup(_ signal: Int32) -> Bool {
        state.withLock { state in
            guard state.exitStatus == nil || state.groupOutlivedLeader else { return false }
            if kill(-pid, signal) == 0 { return true }
            return state.exitStatus == nil && kill(pid, signal) == 0
        }
    }

    // MARK: Waiting

    /// Waits for the process to exit and returns its ``exitStatus``, without holding a thread of the cooperative
    /// pool: the process's own waiter thread resumes the task.
    ///
    /// Cancelling the task does not end the wait: call ``terminate()`` to end the process.
    public func waitForExit() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status: Int32? = state.withLock { state in
                if state.exitStatus == nil { state.waiters.append(continuation) }
                return state.exitStatus
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// Blocks the calling thread until the process exits or `timeout` seconds pass, and returns its ``exitStatus``, or
    /// `nil` on timeout. For a thread of the test's own: on the cooperative pool, use the async ``waitForExit()``.
    public func waitForExit(timeout: TimeInterval) -> Int32? {
        guard exited.wait(timeout: .now() + max(0, timeout)) == .success else { return nil }
        return exitStatus
    }

    // MARK: Output

    /// What the process wrote to its standard output so far, decoded as UTF-8.
    public func output() -> String {
        Self.contents(of: standardOutput)
    }

    /// What the process wrote to its standard error so far, decoded as UTF-8.
    public func errorOutput() -> String {
        Self.contents(of: standardError)
    }

    private static func contents(of file: URL) -> String {
        String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self)
    }

    // MARK: Listening ports

    /// The TCP ports listening on loopback or on any address that this process or any process of its group or any
    /// of its descendants holds (a wrapper's child, one that left the group), read from the system on each call.
    /// Empty once the process and its group have ended, and on platforms other than Linux and macOS.
    package var listeningPorts: Set<UInt16> {
        listeningPorts(in: ListeningPorts.Snapshot())
    }

    private func listeningPorts(in snapshot: ListeningPorts.Snapshot) -> Set<UInt16> {
        let (running, groupAlive) = state.withLock { ($0.exitStatus == nil, $0.groupOutlivedLeader) }
        guard running || groupAlive else { return [] }
        // The leader's descendants only while it runs: once reaped, its children belong to another parent.
        return snapshot.ports(heldByGroup: pid, orDescendantsOf: running ? pid : nil)
    }

    // MARK: The waiter

    /// Starts the thread that waits for the process to exit. A thread, not a task: it blocks in `waitpid`.
    func startWaiter() {
        let waiter = Thread { [self] in awaitExit() }
        waiter.name = "HTTPVCR waiter for \(executable.lastPathComponent) (\(pid))"
        waiter.start()
    }

    private func awaitExit() {
        // Waits without reaping, then reaps under the lock the signals take: until then the pid is still ours.
        var info = siginfo_t()
        var waited = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
        while waited == -1 && errno == EINTR {
            waited = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
        }
        let (status, waiters, groupOutlivedLeader) = state.withLock { state in
            var waitStatus: Int32 = 0
            var reaped = waitpid(pid, &waitStatus, 0)
            while reaped == -1 && errno == EINTR { reaped = waitpid(pid, &waitStatus, 0) }
            if reaped == pid {
                (state.exitStatus, state.terminationSignal) = Self.decode(waitStatus)
                state.groupOutlivedLeader = kill(-pid, 0) == 0
            } else {
                // Reaped by someone else, maybe long ago: the pid may name another process by now.
                state.exitStatus = -1
            }
            let waiters = state.waiters
            state.waiters = []
            return (state.exitStatus ?? -1, waiters, state.groupOutlivedLeader)
        }
        exited.leave()
        for waiter in waiters { waiter.resume(returning: status) }
        if groupOutlivedLeader {
            // What the process left in its group gets the grace, then ends with it. After that kill the group id is
            // never signalled again: once the group is empty, it may name another.
            Thread.sleep(forTimeInterval: Self.terminationGrace)
            state.withLock { state in
                if state.groupOutlivedLeader { kill(-pid, SIGKILL) }
                state.groupOutlivedLeader = false
            }
        }
        Self.unregister(self)
    }

    /// A `waitpid` status as the shell reports it (128 + the signal for a signal's end), and the signal.
    static func decode(_ waitStatus: Int32) -> (status: Int32, signal: Int32?) {
        let signal = waitStatus & 0x7f
        if signal == 0 { return ((waitStatus >> 8) & 0xff, nil) }
        return (128 + signal, signal)
    }

    // MARK: The launched processes

    /// The processes launched and not yet ended, by pid: what ``endAll()`` kills. A process whose group outlived it
    /// stays here until that group is killed.
    private static let launched = Locked<[Int32: LaunchedProcess]>([:], level: .leaf)

    /// The output folders of the handles not yet released. A handle still held when the test process exits (by a
    /// test's global, or by its waiter inside the grace) never reaches `deinit`: its folder goes at exit.
    private static let outputFolders = Locked<Set<URL>>([], level: .leaf)

    /// Registered once, at the first launch: a test process that exits takes its launched processes with it.
    private static let exitHandlerInstalled: Bool = {
        atexit {
            LaunchedProcess.endAll()
            for folder in LaunchedProcess.outputFolders.withLock({ $0 }) {
                try? FileManager.default.removeItem(at: folder)
            }
        }
        return true
    }()

    static func keepOutputFolder(_ folder: URL) {
        _ = exitHandlerInstalled
        outputFolders.withLock { _ = $0.insert(folder) }
    }

    static func removeOutputFolder(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
        outputFolders.withLock { _ = $0.remove(folder) }
    }

    static func register(_ process: LaunchedProcess) {
        launched.withLock { $0[process.pid] = process }
    }

    private static func unregister(_ process: LaunchedProcess) {
        launched.withLock { launched in
            if launched[process.pid] === process { launched[process.pid] = nil }
        }
    }

    /// Kills (SIGKILL) every launched process group still running. Runs when the test process exits; a child a test
    /// left running would otherwise outlive the run.
    package static func endAll() {
        endAll { _ in true }
    }

    /// ``endAll()`` for the launched processes `include` selects: tests end their own without ending others'.
    static func endAll(where include: (LaunchedProcess) -> Bool) {
        for process in launched.withLock({ Array($0.values) }) where include(process) {
            process.signalGroup(SIGKILL)
        }
    }

    /// The launched process still running that listens on `port` (see ``listeningPorts``), if any: whether a request
    /// to a loopback port is the test talking to the server it launched. Reads the system once for all of them.
    package static func listening(onPort port: UInt16) -> LaunchedProcess? {
        let processes = launched.withLock { Array($0.values) }
        guard !processes.isEmpty else { return nil }
        let snapshot = ListeningPorts.Snapshot()
        guard snapshot.mayListen(onPort: port) else { return nil }
        return processes.first { $0.listeningPorts(in: snapshot).contains(port) }
    }
}
