import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension LaunchedProcess {
    /// Why a process could not be launched: the executable is missing or not executable, or its output files could
    /// not be made.
    public struct LaunchError: Error, Sendable, CustomStringConvertible {
        /// The file that was to be launched.
        public var executable: URL
        /// What went wrong, as the system said it.
        public var reason: String
        /// The `errno` the system gave, when it gave one (`ENOENT`: no such file).
        public var errorNumber: Int32?

        /// "Cannot launch PATH: REASON".
        public var description: String {
            "Cannot launch \(executable.path): \(reason)"
        }
    }

    /// Launches `executable` with `arguments`, in a process group of its own, its standard input /dev/null and its
    /// output in files of a new temporary folder; a thread of its own waits for it to exit.
    ///
    /// The process gets exactly `environment`, nothing of the test process's: the caller merges what it wants to
    /// pass on (`ProcessInfo.processInfo.environment.merging(extra) { $1 }`). It starts with every signal at its
    /// default action and none blocked, whatever the test process set, and without the test process's other file
    /// descriptors (where the system allows: glibc 2.34 or later, macOS).
    ///
    /// - Throws: ``LaunchError`` naming the executable and the system's reason.
    package static func launch(
        _ executable: URL,
        arguments: [String],
        environment: [String: String]
    ) throws -> LaunchedProcess {
        let name = executable.lastPathComponent
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("HTTPVCR-launched-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw LaunchError(executable: executable, reason: "cannot make \(folder.path): \(error)")
        }
        keepOutputFolder(folder)
        let standardOutput = folder.appendingPathComponent("\(name).stdout")
        let standardError = folder.appendingPathComponent("\(name).stderr")
        let pid: Int32
        do {
            pid = try spawn(executable, arguments: arguments, environment: environment,
                            standardOutput: standardOutput, standardError: standardError)
        } catch {
            removeOutputFolder(folder)
            throw error
        }
        let process = LaunchedProcess(pid: pid, executable: executable,
                                      standardOutput: standardOutput, standardError: standardError)
        register(process)
        process.startWaiter()
        return process
    }

    /// `posix_spawn`, not `Foundation.Process`: only it sets the child's signal state and process group before the
    /// child runs a line of its own.
    private static func spawn(
        _ executable: URL,
        arguments: [String],
        environment: [String: String],
        standardOutput: URL,
        standardError: URL
    ) throws(LaunchError) -> Int32 {
        #if canImport(Glibc) || os(macOS)
        func failure(_ code: Int32) -> LaunchError {
            LaunchError(executable: executable, reason: String(cString: strerror(code)), errorNumber: code)
        }
        #if canImport(Glibc)
        var attributes = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
        #else
        var attributes: posix_spawnattr_t?
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawnattr_init(&attributes)
        posix_spawn_file_actions_init(&actions)
        defer {
            posix_spawnattr_destroy(&attributes)
            posix_spawn_file_actions_destroy(&actions)
        }

        // Every standard signal at its default action: a runner that ignores SIGTERM or SIGINT passes that on
        // through exec, and the child would shrug off terminate() and interrupt().
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in 1..<Int32(32) where signal != SIGKILL && signal != SIGSTOP {
            sigaddset(&defaults, signal)
        }
        var noneBlocked = sigset_t()
        sigemptyset(&noneBlocked)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP
        #if os(macOS)
        // Only the descriptors set up below reach the child.
        flags |= POSIX_SPAWN_CLOEXEC_DEFAULT
        #endif
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &noneBlocked)
        posix_spawnattr_setpgroup(&attributes, 0)  // a group of its own, led by the child
        posix_spawnattr_setflags(&attributes, Int16(flags))

        // Files, not pipes: nobody has to drain them, and a child that outlives its test holds nothing open that
        // the test run waits for. The child opens them: no descriptor of ours to leak into other children.
        let writeFlags = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput.path, writeFlags, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError.path, writeFlags, 0o644)
        #if canImport(Glibc)
        closeOtherDescriptors(&actions)
        #endif

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw failure(result) }
        return pid
        #else
        throw LaunchError(executable: executable, reason: "launching processes is not supported on this platform")
        #endif
    }

    #if canImport(Glibc)
    /// Closes every descriptor above 2 in the child. The test process opens sockets and pipes on other threads, not
    /// all with close-on-exec; a listening socket the child inherited would look like one of its own
    /// (``listeningPorts``), and a pipe's reader would wait as long as the child lives.
    /// `posix_spawn_file_actions_addclosefrom_np` is glibc 2.34's and Swift's Glibc module does not show it (it is a
    /// GNU extension): looked up by name, and skipped on an older glibc.
    private static func closeOtherDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = UnsafeRawPointer(bitPattern: closeFromAddress) else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }

    /// The address of `posix_spawn_file_actions_addclosefrom_np` (0: none), looked up once; a number, as a pointer
    /// is not `Sendable`. `dlsym(nil, …)` is RTLD_DEFAULT: the libraries the process has loaded.
    private static let closeFromAddress = UInt(bitPattern: dlsym(nil, "posix_spawn_file_actions_addclosefrom_np"))
    #endif
}
