#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import HTTPVCR

extension VCRTests {
    /// Reading a cassette's bytes by its path: every kind of file, and the errors a user can meet.
    @Suite struct FileContentsTests {
        @Test func aFileIsReadWhole() throws {
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            for size in [1, 4_095, 4_096, 300_000] {
                let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
                let file = folder.appendingPathComponent("\(size).json")
                try bytes.write(to: file)
                #expect(FileContents.read(atPath: file.path) == .success(bytes), "\(size) bytes")
            }
        }

        @Test func anEmptyFileIsReadAsNoBytes() throws {
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("empty.json")
            try Data().write(to: file)
            #expect(FileContents.read(atPath: file.path) == .success(Data()))
            #expect(throws: VCRError.self) { try CassetteFile.read(at: file) }
        }

        /// A pipe says nothing of its size: it is read until it ends, past the first buffer.
        @Test func aPipeIsReadUntilItEnds() throws {
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let fifo = folder.appendingPathComponent("pipe.json").path
            #expect(mkfifo(fifo, 0o600) == 0)
            let bytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let writer = Thread {
                let descriptor = open(fifo, O_WRONLY)
                bytes.withUnsafeBytes { buffer in
                    var written = 0
                    while written < buffer.count {
                        let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                        if count <= 0 { break }
                        written += count
                    }
                }
                close(descriptor)
            }
            writer.start()
            #expect(FileContents.read(atPath: fifo) == .success(bytes))
        }

        @Test func whatIsNotThereIsNotFound() throws {
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("file.json")
            try Data("{}".utf8).write(to: file)
            #expect(FileContents.read(atPath: folder.appendingPathComponent("missing.json").path) == .failure(.notFound))
            // A part of the path is a file, not a folder.
            #expect(FileContents.read(atPath: file.appendingPathComponent("below.json").path) == .failure(.notFound))
            #expect { try CassetteFile.read(at: folder.appendingPathComponent("missing.json")) } throws: { error in
                (error as? VCRError)?.code == .cassetteNotFound
            }
        }

        @Test func aFolderIsNamedAsOne() throws {
            let folder = try temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let inner = folder.appendingPathComponent("Cassette.json")
            try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
            #expect(FileContents.read(atPath: inner.path) == .failure(.unreadable("it is a folder")))
            #expect { try CassetteFile.read(at: inner) } throws: { error in
                guard let error = error as? VCRError else { return false }
                return error.code == .malformedCassette && error.message.contains(inner.path)
                    && error.message.contains("cannot be read (it is a folder)")
            }
        }

        private func temporaryFolder() throws -> URL {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("FileContents-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return folder
        }
    }
}
