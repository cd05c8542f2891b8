import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension VCR {
    /// Sends this process's requests over the bridge of the test that launched it, when it was launched with a
    /// ``VCRBridge``'s environment; does nothing otherwise.
    ///
    /// Call it early in the process that a test launches (an app's debug build, a server's test configuration),
    /// before anything uses `URLSession.shared`. Without the bridge's environment variables it does nothing and
    /// returns `false`, so it can stay in the app:
    ///
    /// ```swift
    /// @main struct MyApp: App {
    ///     init() {
    ///         #if DEBUG
    ///         VCR.connectToBridge()
    ///         #endif
    ///     }
    ///     …
    /// }
    /// ```
    ///
    /// Once connected, every request made through `URLSession.shared`, a session set up with ``install(in:)``, or
    /// the any-client door (``data(for:sending:)`` and its forms, whose `sending` is then not called) goes to the
    /// test's cassette over the bridge, and the app gets the answer as an in-process replay gives it: status,
    /// header fields, body, errors. Its own session runs each request as it runs a recording: its delegates are
    /// asked at each redirect hop (the next request crosses the bridge again), its cookies are stored and sent.
    /// A request the test's cassette refuses (one it cannot match in a mode that does not record) fails with the
    /// same ``VCRError``, and is reported in the test process on the test that started the bridge.
    ///
    /// > Note: The connection takes the place of a cassette inserted for the process: while it is there,
    /// > ``insertCassette(_:)`` in this process throws. Nothing is written to disk here; the test process records.
    ///
    /// - Returns: Whether a bridge was found and connected (also `true` when it already was).
    @discardableResult
    public static func connectToBridge() -> Bool {
        do {
            return try BridgeConnection.connect { name in getenv(name).map { String(cString: $0) } } != nil
        } catch {
            FileHandle.standardError.write(Data("HTTPVCR: could not connect to the bridge: \(error.message)\n".utf8))
            return false
        }
    }
}
