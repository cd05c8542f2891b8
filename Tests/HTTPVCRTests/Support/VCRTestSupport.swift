import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// Every test that inserts a cassette is nested in this suite: the VCR and its URLProtocol are global, so these
/// tests run one at a time while the rest of the test suite runs in parallel.
@Suite(.serialized) struct VCRTests {}

/// A fresh folder for one test's cassettes, removed afterwards.
struct TemporaryFolder: ~Copyable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("HTTPVCRTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var path: String { url.path }
}

/// Runs `body` with a cassette inserted (shared defaults reset, `cassettesPath` set), and always ejects it.
///
/// Holds ``VCRCassetteLock/shared`` throughout, as the testing integrations do, so that these tests never see
/// the cassettes of HTTPVCRTesting's tests running in parallel in the same process.
func withCassette<T>(
    _ name: String,
    in folder: String,
    _ configure: (inout VCRConfiguration) -> Void = { _ in },
    _ body: (Cassette) async throws -> T
) async throws -> T {
    if CassetteLockScope.isHeld { return try await withCassetteHeld(name, in: folder, configure, body) }
    return try await VCRCassetteLock.shared.withLock {
        try await withCassetteHeld(name, in: folder, configure, body)
    }
}

/// Holds the cassette lock across several cassettes, so that what the server saw between them is this test's
/// doing alone (the testing integrations' tests record in parallel in this same process).
func holdingCassettes<T>(_ body: () async throws -> T) async throws -> T {
    try await VCRCassetteLock.shared.withLock {
        try await CassetteLockScope.$isHeld.withValue(true) { try await body() }
    }
}

enum CassetteLockScope {
    @TaskLocal static var isHeld = false
}

private func withCassetteHeld<T>(
    _ name: String,
    in folder: String,
    _ configure: (inout VCRConfiguration) -> Void,
    _ body: (Cassette) async throws -> T
) async throws -> T {
    _ = VCR.takeFailures()
    let cassette = try VCR.insertCassette { configuration in
        configuration = VCRConfiguration()
        configuration.cassettesPath = folder
        configuration.cassettePath = name
        configure(&configuration)
    }
    do {
        let result = try await body(cassette)
        try VCR.ejectCassette()
        return result
    } catch {
        try? VCR.ejectCassette()
        throw error
    }
}

/// A session that goes through HTTPVCR, made from an ephemeral configuration.
func vcrSession(timeout: TimeInterval = 30) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = timeout
    VCR.install(in: configuration)
    return URLSession(configuration: configuration)
}

/// A value behind a lock, for tests that collect what callbacks on other threads saw.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
