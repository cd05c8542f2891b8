import HTTPVCR

/// Tests that hold every thread of Swift's cooperative pool take turns: two holding at once would each wait for a
/// thread the other holds. A test waiting for its turn is suspended, holding none.
public enum PoolHolding {
    private static let turn = VCRCassetteLock()

    /// Runs `body` once no other test holds the pool.
    public static func inTurn<T>(_ body: () async throws -> T) async rethrows -> T {
        await turn.lock()
        defer { turn.unlock() }
        return try await body()
    }
}
