import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the process holds, from glibc's allocator and from the kernel. Linux only; elsewhere every probe is
/// nil and the memory rows print n/a.
enum Memory {
    #if os(Linux) && canImport(Glibc)
    private typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
    private typealias MallocTrim = @convention(c) (Int) -> Int32

    // `malloc.h` is not part of the Glibc module: look the two functions up at run time.
    private static let mallocInfo: MallocInfo? = dlsym(dlopen(nil, RTLD_NOW), "malloc_info")
        .map { unsafeBitCast($0, to: MallocInfo.self) }
    private static let mallocTrim: MallocTrim? = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim")
        .map { unsafeBitCast($0, to: MallocTrim.self) }

    /// Bytes allocated and not freed, in every arena and in mmapped chunks: what `mallinfo2`'s `uordblks +
    /// hblkhd` give, read from `malloc_info`'s totals (system − free + mmap).
    static func heapInUse() -> Int? {
        guard let mallocInfo else { return nil }
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return nil }
        _ = mallocInfo(0, stream)
        fclose(stream)
        guard let buffer else { return nil }
        let xml = String(cString: buffer)
        free(buffer)
        // The totals over all arenas follow the last </heap>.
        guard let totals = xml.range(of: "</heap>", options: .backwards).map({ xml[$0.upperBound...] }) ?? Optional(xml[...])
        else { return nil }
        func value(_ tag: String, _ type: String) -> Int? {
            guard let start = totals.range(of: "<\(tag) type=\"\(type)\"") else { return nil }
            let rest = totals[start.upperBound...]
            guard let sizeStart = rest.range(of: "size=\"") else { return nil }
            let digits = rest[sizeStart.upperBound...].prefix { $0.isNumber }
            return Int(digits)
        }
        guard let system = value("system", "current"), let fast = value("total", "fast"),
              let rest = value("total", "rest") else { return nil }
        return system - fast - rest + (value("total", "mmap") ?? 0)
    }

    /// Gives free heap pages back to the kernel, so that VmRSS reflects what is still in use.
    static func trim() {
        _ = mallocTrim?(0)
    }

    /// Resets VmHWM to the current RSS (`echo 5 > /proc/self/clear_refs`). Returns false when not allowed.
    @discardableResult
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do { try handle.write(contentsOf: Data("5".utf8)) } catch { return false }
        return true
    }

    /// A `/proc/self/status` field in bytes (`VmRSS`, `VmHWM`).
    static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kilobytes = line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first
            return kilobytes.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
    #else
    static func heapInUse() -> Int? { nil }
    static func trim() {}
    @discardableResult static func resetPeak() -> Bool { false }
    static func status(_ field: String) -> Int? { nil }
    #endif

    struct Snapshot {
        var heap: Int?
        var rss: Int?
        var peak: Int?

        static func take() -> Snapshot {
            Memory.trim()
            return Snapshot(heap: Memory.heapInUse(), rss: Memory.status("VmRSS"), peak: Memory.status("VmHWM"))
        }

        /// What grew from `before` to this snapshot, in bytes.
        func growth(since before: Snapshot) -> (heap: Int?, rss: Int?, peak: Int?) {
            func difference(_ a: Int?, _ b: Int?) -> Int? { a.flatMap { a in b.map { a - $0 } } }
            return (difference(heap, before.heap), difference(rss, before.rss), difference(peak, before.rss))
        }
    }
}
