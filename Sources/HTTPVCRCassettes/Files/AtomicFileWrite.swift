#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Replaces a file's whole content so that readers see the old bytes or the new ones, never a mix, and so that the
/// save keeps what the user had:
///
/// - the new bytes go to a temporary file `.<name>.<UUID>.tmp` next to the file, are flushed to disk, then renamed
///   over it, and the folder is flushed too, so a crash leaves one version or the other;
/// - an existing file's permissions are kept, and its owner and group where the process may set them;
/// - a symbolic link (or a chain of them, relative or absolute, even dangling) is written through: the link stays,
///   its target is replaced, in the target's folder;
/// - temporaries left by an earlier save of the same file that was killed are removed, and a failed save removes
///   its own.
///
/// Not kept: ACLs and extended attributes (the new file gets the folder's defaults), and hard links (the file is a
/// new inode, as with any atomic save).
package enum AtomicFileWrite {
    /// Why a write failed, as words that fit after "Cannot save <file>: ".
    package struct Failure: Error {
        package var reason: String
        /// The file the path leads to when the path is a symbolic link.
        var linkTarget: String?
        /// The new content is in place, but its folder could not be flushed, so it may not survive a crash.
        package var isReplaced = false
    }

    /// Writes some bytes to a descriptor like `write(2)`: the count written, or -1 with `errno` set.
    package typealias WriteBytes = (_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int

    /// Replaces the content of the file at `url` with `data` (see the type's description). Missing folders are
    /// created. On failure the file that was there is untouched and no temporary file is left.
    /// - Parameter writeBytes: How bytes reach the temporary file; tests pass one that fails like a full disk.
    package static func replaceContents(
        of url: URL,
        with data: Data,
        writeBytes: WriteBytes = { descriptor, bytes in write(descriptor, bytes.baseAddress, bytes.count) }
    ) throws(Failure) {
        let target = try resolvingLinks(url.path)
        let linkTarget = target == url.path ? nil : target
        do throws(Failure) {
            try replaceContents(ofFileAt: target, with: data, writeBytes: writeBytes)
        } catch {
            var failure = error
            failure.linkTarget = linkTarget
            throw failure
        }
    }

    private static func replaceContents(
        ofFileAt path: String,
        with data: Data,
        writeBytes: WriteBytes
    ) throws(Failure) {
        let (folder, name) = split(path)
        try createFolder(folder)
        let existing = try existingFile(at: path)
        removeStaleTemporaries(of: name, in: folder)
        // A new file gets what the umask gives, as Data.write does; a replacement starts private and takes the old
        // file's mode at the end, so its content is never more visible than the user allowed.
        let (temporary, descriptor) = try createTemporary(for: name, in: folder, mode: existing == nil ? 0o666 : 0o600)
        var isRenamed = false
        defer {
            // Removed before closing, while the lock still tells other saves the file is in use.
            if !isRenamed { unlink(temporary) }
            close(descriptor)
        }
        if let error = writeAll(data, to: descriptor, writeBytes: writeBytes) {
            throw Failure(reason: describe(error, in: folder, doing: "writing \(temporary)"))
        }
        if let existing { keepOwnerAndMode(of: existing, on: descriptor) }
        if fsync(descriptor) != 0 {
            throw Failure(reason: describe(errno, in: folder, doing: "flushing \(temporary) to disk"))
        }
        if rename(temporary, path) != 0 {
            let error = errno
            throw Failure(reason: error == EISDIR
                ? "\(path) is a folder, not a file"
                : describe(error, in: folder, doing: "renaming \(temporary) to \(name)"))
        }
        isRenamed = true
        try flushFolder(folder)
    }

    // MARK: Links and folders

    /// The file `path` leads to: itself, or the end of its chain of symbolic links (which need not exist yet).
    private static func resolvingLinks(_ path: String) throws(Failure) -> String {
        var current = path
        // Linux gives up after 40 links, macOS after 32.
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: 4097)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count >= 0 else {
                throw Failure(reason: "cannot read the symbolic link \(current): \(text(errno))")
            }
            let destination = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if destination.hasPrefix("/") {
                current = destination
            } else {
                // Kept unnormalized: the system resolves ".." after any linked folder, as it does for the link.
                let folder = split(current).folder
                current = (folder == "/" ? "" : folder) + "/" + destination
            }
        }
        throw Failure(reason: "\(path) leads through more than 40 symbolic links (a loop?)")
    }

    /// The folder and the name of an absolute path.
    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        return (folder, String(path[path.index(after: slash)...]))
    }

    /// Creates `folder` and any missing parent, saying which part of the path is in the way.
    private static func createFolder(_ folder: String) throws(Failure) {
        var info = stat()
        if stat(folder, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw Failure(reason: "\(folder) is a file, not a folder") }
            return
        }
        let error = errno
        guard error == ENOENT || error == ENOTDIR else {
            throw Failure(reason: describe(error, in: folder, doing: "looking at \(folder)"))
        }
        try createFolder(split(folder).folder)
        if mkdir(folder, 0o777) != 0 {
            let error = errno
            // Another process may have made it meanwhile.
            if error == EEXIST, stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return }
            throw Failure(reason: describe(error, in: split(folder).folder, doing: "creating \(folder)"))
        }
    }

    /// The status of the regular file at `path`, nil when there is none; anything else there is an error.
    private static func existingFile(at path: String) throws(Failure) -> stat? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let error = errno
            if error == ENOENT { return nil }
            throw Failure(reason: describe(error, in: split(path).folder, doing: "looking at \(path)"))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return info
        case S_IFDIR: throw Failure(reason: "\(path) is a folder, not a file")
        default: throw Failure(reason: "\(path) is not a regular file")
        }
    }

    // MARK: The temporary file

    /// Creates and locks a new temporary file. The lock, held until the save ends, is how
    /// ``removeStaleTemporaries(of:in:)`` in another save (another thread or process) tells a live temporary from
    /// one whose save was killed: the system releases a killed process's locks.
    private static func createTemporary(
        for name: String,
        in folder: String,
        mode: mode_t
    ) throws(Failure) -> (path: String, descriptor: Int32) {
        for _ in 0..<5 {
            let path = "\(folder)/.\(name).\(UUID().uuidString).tmp"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            guard descriptor >= 0 else {
                let error = errno
                if error == EEXIST { continue }
                if error == ENAMETOOLONG {
                    throw Failure(reason: "the name is too long to save it through a temporary .\(name).<UUID>.tmp")
                }
                throw Failure(reason: describe(error, in: folder, doing: "creating a file in \(folder)"))
            }
            // A cleanup that took the lock before us removes this file: start again under another name.
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK,
               isSameFile(descriptor, path) {
                return (path, descriptor)
            }
            close(descriptor)
        }
        throw Failure(reason: "cannot create a temporary file in \(folder): other saves keep taking its name")
    }

    private static func isSameFile(_ descriptor: Int32, _ path: String) -> Bool {
        var opened = stat()
        var named = stat()
        return fstat(descriptor, &opened) == 0 && lstat(path, &named) == 0
            && opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    /// Removes the temporaries `.<name>.<UUID>.tmp` of saves of this file that were killed before their rename. A
    /// temporary that another save holds locked is in use and stays; so does every other file.
    private static func removeStaleTemporaries(of name: String, in folder: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let prefix = Array(".\(name).".utf8)
        let suffix = Array(".tmp".utf8)
        for entry in entries {
            let bytes = Array(entry.utf8)
            guard bytes.count == prefix.count + 36 + suffix.count, bytes.starts(with: prefix),
                  bytes.reversed().starts(with: suffix.reversed()),
                  UUID(uuidString: String(decoding: bytes[prefix.count..<(bytes.count - suffix.count)], as: UTF8.self))
                    != nil
            else { continue }
            let path = "\(folder)/\(entry)"
            // Non-blocking, so that a pipe that happens to have such a name does not hang the save.
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                unlink(path)
            } else if errno != EWOULDBLOCK, isOlderThanAnHour(path) {
                // A file system without locks: only age tells that its save is over.
                unlink(path)
            }
        }
    }

    private static func isOlderThanAnHour(_ path: String) -> Bool {
        let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        return modified.map { $0.timeIntervalSinceNow < -3600 } ?? false
    }

    /// Writes every byte, going on after partial writes and interruptions. Returns the `errno` of a failure.
    private static func writeAll(_ data: Data, to descriptor: Int32, writeBytes: WriteBytes) -> Int32? {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = writeBytes(descriptor, UnsafeRawBufferPointer(rebasing: buffer[offset...]))
                if written > 0 {
                    offset += written
                } else if written < 0 {
                    let error = errno
                    if error != EINTR { return error }
                } else {
                    return EIO
                }
            }
            return nil
        }
    }

    /// Gives the temporary the replaced file's owner, group and permissions. Best effort: only the superuser may
    /// give a file away, and a member of a group may set only that group.
    private static func keepOwnerAndMode(of existing: stat, on descriptor: Int32) {
        var current = stat()
        guard fstat(descriptor, &current) == 0 else { return }
        // Owner first: changing it clears set-user-ID and set-group-ID bits, which the mode then restores.
        if current.st_uid != existing.st_uid || current.st_gid != existing.st_gid,
           fchown(descriptor, existing.st_uid, existing.st_gid) != 0,
           current.st_gid != existing.st_gid {
            _ = fchown(descriptor, uid_t.max, existing.st_gid)
        }
        // A file system without permissions refuses; the temporary then stays private (0600 or less).
        _ = fchmod(descriptor, existing.st_mode & 0o7777)
    }

    /// Flushes the rename to disk. File systems that cannot flush a folder, and folders the process may write but
    /// not read, are left as they are.
    private static func flushFolder(_ folder: String) throws(Failure) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        if fsync(descriptor) != 0 {
            let error = errno
            guard ![EINVAL, ENOTSUP, EOPNOTSUPP, EBADF, EINTR].contains(error) else { return }
            let reason = "its folder \(folder) could not be flushed to disk (\(text(error)))"
            throw Failure(reason: reason, isReplaced: true)
        }
    }

    // MARK: Messages

    /// What an `errno` means for a save in `folder`; `doing` names the step for the rarer errors.
    private static func describe(_ error: Int32, in folder: String, doing: String) -> String {
        switch error {
        case ENOSPC: "the disk is full (no space left for it in \(folder))"
        case EDQUOT: "the disk quota is used up (no space left for it in \(folder))"
        case EROFS: "\(folder) is on a read-only file system"
        case EACCES, EPERM: "permission denied: no right to write in \(folder)"
        case ENOTDIR: "a part of \(folder) is a file, not a folder"
        default: "\(doing) failed: \(text(error))"
        }
    }

    private static func text(_ error: Int32) -> String {
        String(cString: strerror(error))
    }
}
