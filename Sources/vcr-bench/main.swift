// `swift run -c release vcr-bench [--quick] [--server URL]`: see Docs/Performance.md and Bench.swift.
import Foundation

/// The benchmark runs in a task while the main thread waits on a semaphore. A top-level `await` would park
/// the main thread in libdispatch's `sigsuspend`, which valgrind 3.19 crashes on, and callgrind is how the
/// misses are profiled.
final class ExitStatus: @unchecked Sendable {
    var code: Int32 = 0
}

let status = ExitStatus()
let finished = DispatchSemaphore(value: 0)
let arguments = Array(CommandLine.arguments.dropFirst())
// Before the first task starts a thread: see CPUPinning.
let pinnedCPU = arguments.contains("--no-pin") ? nil : CPUPinning.pinToOneCPU()
Task.detached {
    status.code = await Bench.main(arguments, pinnedCPU: pinnedCPU)
    finished.signal()
}
finished.wait()
exit(status.code)
