#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import HTTPVCR

/// Saving keeps what the user had: permissions, owner, symbolic links, and the old file when anything goes wrong.
@Suite struct CassetteSaveTests {
    static let old = Data(#"{"format": "HTTPVCR", "version": 1, "scenes": []}"#.utf8 + [0x0A])
    static let new = Data(#"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": 1}]}"#.utf8)

    // MARK: Permissions and owner

    @Test(arguments: [0o600, 0o644, 0o640, 0o444])
    func permissionsAreKept(mode: Int) throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("cassette.json")
        try Self.old.write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        try CassetteFile.write(Self.new, to: file)
        #expect(try Data(contentsOf: file) == Self.new)
        #expect(try permissions(file.path) == mode)
    }

    @Test func aNewFileGetsTheModeDataWriteGives() throws {
        let folder = try TemporaryFolder()
        let reference = folder.url.appendingPathComponent("reference.json")
        try Self.new.write(to: reference)
        let file = folder.url.appendingPathComponent("cassette.json")
        try CassetteFile.write(Self.new, to: file)
        #expect(try permissions(file.path) == permissions(reference.path))
    }

    @Test func ownerAndGroupAreKeptWhereTheProcessMay() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("cassette.json")
        try Self.old.write(to: file)
        // The superuser may give the file to anyone; others may only pick another of their own groups.
        var owner = (user: geteuid(), group: getegid())
        if geteuid() == 0 {
            owner = (1, 1)
        } else {
            var groups = [gid_t](repeating: 0, count: 256)
            let count = getgroups(Int32(groups.count), &groups)
            if let other = groups.prefix(Int(max(count, 0))).first(where: { $0 != getegid() }) { owner.group = other }
        }
        #expect(chown(file.path, owner.user, owner.group) == 0)
        try CassetteFile.write(Self.new, to: file)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.ownerAccountID] as? NSNumber)?.uint32Value == owner.user)
        #expect((attributes[.groupOwnerAccountID] as? NSNumber)?.uint32Value == owner.group)
        #expect(try Data(contentsOf: file) == Self.new)
    }

    // MARK: Symbolic links

    enum LinkShape: String, CaseIterable, CustomTestStringConvertible {
        case absolute, relative, chain, dangling
        var testDescription: String { rawValue }
    }

    @Test(arguments: LinkShape.allCases)
    func aLinkIsWrittenThroughAndStaysALink(shape: LinkShape) throws {
        let folder = try TemporaryFolder()
        let manager = FileManager.default
        for name in ["suite", "shared", "links"] {
            try manager.createDirectory(at: folder.url.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        let link = folder.url.appendingPathComponent("suite/cassette.json")
        var target = folder.url.appendingPathComponent("shared/real.json")
        switch shape {
        case .absolute:
            try manager.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        case .relative:
            try manager.createSymbolicLink(atPath: link.path, withDestinationPath: "../shared/real.json")
        case .chain:
            // suite/cassette.json -> ../links/middle.json -> (absolute) shared/real.json
            try manager.createSymbolicLink(atPath: link.path, withDestinationPath: "../links/middle.json")
            try manager.createSymbolicLink(
                atPath: folder.url.appendingPathComponent("links/middle.json").path,
                withDestinationPath: target.path
            )
        case .dangling:
            target = folder.url.appendingPathComponent("shared/new/real.json")
            try manager.createSymbolicLink(atPath: link.path, withDestinationPath: "../shared/new/real.json")
        }
        let linkText = try manager.destinationOfSymbolicLink(atPath: link.path)
        if shape != .dangling {
            try Self.old.write(to: target)
            try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
        }

        try CassetteFile.write(Self.new, to: link)

        #expect(try manager.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType == .typeSymbolicLink)
        #expect(try manager.destinationOfSymbolicLink(atPath: link.path) == linkText)
        #expect(try Data(contentsOf: target) == Self.new)
        #expect(try Data(contentsOf: link) == Self.new)
        if shape != .dangling { #expect(try permissions(target.path) == 0o600) }
        #expect(try manager.contentsOfDirectory(atPath: link.deletingLastPathComponent().path) == ["cassette.json"])
        #expect(try manager.contentsOfDirectory(atPath: target.deletingLastPathComponent().path).filter {
            $0.hasSuffix(".tmp")
        } == [], "no temporary file is left next to the target")
    }

    @Test func aLoopOfLinksIsNamedInTheError() throws {
        let folder = try TemporaryFolder()
        let first = folder.url.appendingPathComponent("a.json")
        try FileManager.default.createSymbolicLink(atPath: first.path, withDestinationPath: "b.json")
        try FileManager.default.createSymbolicLink(
            atPath: folder.url.appendingPathComponent("b.json").path,
            withDestinationPath: "a.json"
        )
        let error = try #require(throws: VCRError.self) { try CassetteFile.write(Self.new, to: first) }
        #expect(error.code == .saveFailed)
        #expect(error.message.contains("Cannot save cassette \(first.path)"), "\(error.message)")
        #expect(error.message.contains("more than 40 symbolic links"), "\(error.message)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["a.json", "b.json"])
    }

    // MARK: Temporary files

    @Test func aKilledSavesTemporaryIsRemovedAndOtherFilesStay() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("cassette.json")
        try Self.old.write(to: file)
        let stale = [".cassette.json.\(UUID().uuidString).tmp", ".cassette.json.\(UUID().uuidString.lowercased()).tmp"]
        let unrelated = [
            ".cassette.json.backup.tmp",
            ".cassette.json.\(UUID().uuidString).tmp.orig",
            ".other.json.\(UUID().uuidString).tmp",
            "cassette.json.\(UUID().uuidString).tmp",
            ".cassette.json.\(UUID().uuidString)-0.tmp",
            ".cassette.json.json.\(UUID().uuidString).tmp",
        ]
        for name in stale + unrelated {
            try Data("half a cassette".utf8).write(to: folder.url.appendingPathComponent(name))
        }
        // A save in progress elsewhere (another process or thread) holds its temporary locked: it must stay.
        let inUse = ".cassette.json.\(UUID().uuidString).tmp"
        let inUsePath = folder.url.appendingPathComponent(inUse).path
        let descriptor = open(inUsePath, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_EX) == 0)

        try CassetteFile.write(Self.new, to: file)

        #expect(try Data(contentsOf: file) == Self.new)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(Set(left) == Set(unrelated + [inUse, "cassette.json"]))
    }

    // MARK: Failures

    @Test func anUnwritableFolderKeepsTheOldFileAndSaysWhy() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("cassette.json")
        try Self.old.write(to: file)
        let expected: String
        let target: URL
        if geteuid() != 0 {
            try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: folder.path)
            target = file
            expected = "permission denied: no right to write in \(folder.path)"
        } else {
            // The superuser writes in any folder, whatever its mode: fail by asking for a folder where the old
            // file is.
            target = file.appendingPathComponent("inner.json")
            expected = "\(file.path) is a file, not a folder"
        }
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path) }

        let error = try #require(throws: VCRError.self) { try CassetteFile.write(Self.new, to: target) }

        #expect(error.code == .saveFailed)
        #expect(error.cassettePath == target.path)
        #expect(error.message
            == "Cannot save cassette \(target.path): \(expected). The previous file, if any, is unchanged.")
        #expect(try Data(contentsOf: file) == Self.old)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["cassette.json"])
    }

    @Test func aFolderWhereTheCassetteShouldBeIsNamed() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("cassette.json")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        try Self.old.write(to: file.appendingPathComponent("inside"))

        let error = try #require(throws: VCRError.self) { try CassetteFile.write(Self.new, to: file) }

        #expect(error.code == .saveFailed)
        #expect(error.message == "Cannot save cassette \(file.path): \(file.path) is a folder, not a file. "
            + "The previous file, if any, is unchanged.")
        #expect(try Data(contentsOf: file.appendingPathComponent("inside")) == Self.old)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["cassette.json"])
    }

    @Test func aFailureThroughALinkNamesTheLinkAndItsTarget() throws {
        let folder = try TemporaryFolder()
        let blocker = folder.url.appendingPathComponent("not-a-folder")
        try Self.old.write(to: blocker)
        let link = folder.url.appendingPathComponent("cassette.json")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "not-a-folder/real.json")

        let error = try #require(throws: VCRError.self) { try CassetteFile.write(Self.new, to: link) }

        #expect(error.message == "Cannot save cassette \(link.path) (a link to \(folder.path)/not-a-folder/real.json): "
            + "\(blocker.path) is a file, not a folder. The previous file, if any, is unchanged.")
        #expect(try Data(contentsOf: blocker) == Self.old)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "not-a-folder/real.json")
    }

    /// A real full disk needs a small file system, which only the superuser may mount, so the writes fail the way
    /// a full disk makes them fail: part of the bytes go in, then ENOSPC.
    @Test func aFullDiskKeepsTheOldFileByteForByte() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("cassette.json")
        try Self.old.write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let calls = Locked(0)
        let fillingDisk: AtomicFileWrite.WriteBytes = { descriptor, bytes in
            if calls.withLock({ $0 += 1; return $0 }) == 1 { return write(descriptor, bytes.baseAddress, 10) }
            errno = ENOSPC
            return -1
        }

        let failure = try #require(throws: AtomicFileWrite.Failure.self) {
            try AtomicFileWrite.replaceContents(of: file, with: Self.new, writeBytes: fillingDisk)
        }

        #expect(failure.reason == "the disk is full (no space left for it in \(folder.path))")
        #expect(!failure.isReplaced)
        #expect(calls.withLock { $0 } == 2, "a partial write goes on with the rest")
        #expect(try Data(contentsOf: file) == Self.old)
        #expect(try permissions(file.path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["cassette.json"])
    }

    @Test func interruptedAndPartialWritesAreCompleted() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("cassette.json")
        let calls = Locked(0)
        // Three bytes at a time, with an interruption before each.
        let slowDisk: AtomicFileWrite.WriteBytes = { descriptor, bytes in
            if calls.withLock({ $0 += 1; return $0 }) % 2 == 1 {
                errno = EINTR
                return -1
            }
            return write(descriptor, bytes.baseAddress, min(3, bytes.count))
        }
        try AtomicFileWrite.replaceContents(of: file, with: Self.new, writeBytes: slowDisk)
        #expect(try Data(contentsOf: file) == Self.new)
    }
}

private func permissions(_ path: String) throws -> Int? {
    (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
}
