import Foundation

/// Runs the whole benchmark on one CPU (Linux), unless `--no-pin`.
///
/// URLSession hands each request from thread to thread several times. With several CPUs a handover may have to
/// wake another one, and how long that takes depends on what else the machine is doing: on the 2-CPU machine
/// this was written on, sequential throughput of the floor moved by a factor of two from one run to the next,
/// and the replay/floor ratio between 0.65 and 1.05. On one CPU the same handovers cost the same each time,
/// ratios move by a few percent, and what they compare is each row's own CPU work, in full: a slower replay
/// path is no longer hidden behind idle waits.
enum CPUPinning {
    /// Call from the main thread before any other thread exists, so that every thread the process starts later
    /// inherits the mask. Returns the CPU, or nil when the process could not be pinned (or is not on Linux).
    static func pinToOneCPU() -> Int? {
        #if os(Linux)
        // `sched_getaffinity` and `sched_setaffinity` need _GNU_SOURCE, which the Glibc module lacks.
        typealias Affinity = @convention(c) (Int32, Int, UnsafeMutableRawPointer?) -> Int32
        let library = dlopen(nil, RTLD_NOW)
        guard let get = dlsym(library, "sched_getaffinity").map({ unsafeBitCast($0, to: Affinity.self) }),
              let set = dlsym(library, "sched_setaffinity").map({ unsafeBitCast($0, to: Affinity.self) })
        else { return nil }
        let size = 128  // sizeof(cpu_set_t): 1,024 CPUs
        var mask = [UInt8](repeating: 0, count: size)
        guard mask.withUnsafeMutableBytes({ get(0, size, $0.baseAddress) }) == 0,
              // The first CPU this process may use: respects a mask set from outside (taskset, cgroups).
              let byte = mask.firstIndex(where: { $0 != 0 })
        else { return nil }
        let cpu = byte * 8 + mask[byte].trailingZeroBitCount
        var single = [UInt8](repeating: 0, count: size)
        single[byte] = UInt8(1) << (cpu % 8)
        return single.withUnsafeMutableBytes({ set(0, size, $0.baseAddress) }) == 0 ? cpu : nil
        #else
        return nil
        #endif
    }
}
