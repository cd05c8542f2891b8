#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reads a whole file by its path with `open` and `read`.
///
/// `Data(contentsOf:)` takes a `URL` and works its path out again, which cost a twentieth of loading a small
/// cassette; the cassette's path is known already. Same system calls: open, fstat, read, close.
package enum FileContents {
    package enum Failure: Error, Equatable {
        /// Nothing at the path, or a part of it is not a folder.
        case notFound
        /// Words that fit in "cannot be read (…)".
        case unreadable(String)
    }

    package static func read(atPath path: String) -> Result<Data, Failure> {
        var descriptor: Int32
        repeat { descriptor = open(path, O_RDONLY | O_CLOEXEC) } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            let error = errno
            return .failure(error == ENOENT || error == ENOTDIR ? .notFound : .unreadable(describe(error)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(.unreadable(describe(errno))) }
        if (status.st_mode & S_IFMT) == S_IFDIR { return .failure(.unreadable("it is a folder")) }
        // A regular file is read to the size it has; anything else (a pipe, a device, a file that gives no size)
        // until it ends. The buffer is not zeroed first, as `Data(count:)` would.
        let size = (status.st_mode & S_IFMT) == S_IFREG && status.st_size > 0 ? Int(status.st_size) : nil
        var capacity = size ?? 64 * 1024
        guard var buffer = malloc(capacity) else { return .failure(.unreadable("out of memory")) }
        var filled = 0
        while true {
            if filled == capacity {
                if size != nil { break }
                guard let grown = realloc(buffer, capacity * 2) else {
                    free(buffer)
                    return .failure(.unreadable("out of memory"))
                }
                (buffer, capacity) = (grown, capacity * 2)
            }
            let count = readBytes(descriptor, buffer + filled, capacity - filled)
            if count < 0 {
                if errno == EINTR { continue }
                let error = errno
                free(buffer)
                return .failure(.unreadable(describe(error)))
            }
            if count == 0 { break }
            filled += count
        }
        return .success(Data(bytesNoCopy: buffer, count: filled, deallocator: .free))
    }

    private static func describe(_ error: Int32) -> String {
        switch error {
        case EACCES, EPERM: "permission denied"
        case EISDIR: "it is a folder"
        default: String(cString: strerror(error))
        }
    }
}

/// `read(2)`, out of reach of `FileContents.read`'s name.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
