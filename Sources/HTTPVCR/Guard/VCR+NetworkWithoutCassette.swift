import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

extension VCR {
    /// `VCR_ALLOW_NETWORK`, read once: `0`/`false`/`no`/`off` or `1`/`true`/`yes`/`on`.
    private static let allowsNetworkFromEnvironment: Bool? = {
        guard let value = getenv("VCR_ALLOW_NETWORK").map({ String(cString: $0).lowercased() }) else { return nil }
        if ["0", "false", "no", "off"].contains(value) { return false }
        if ["1", "true", "yes", "on"].contains(value) { return true }
        return nil
    }()

    /// Whether a request to `origin` made while no cassette is in force is refused: the shared configuration's
    /// ``VCRConfiguration/allowsNetworkWithoutCassette`` (`VCR_ALLOW_NETWORK` first) and
    /// ``VCRConfiguration/allowsLoopbackWithoutCassette``.
    static func refusesNetworkWithoutCassette(to origin: NetworkOrigin?) -> Bool {
        let (allowsNetwork, allowsLoopback) = networkWithoutCassette
        if allowsNetworkFromEnvironment ?? allowsNetwork { return false }
        return !(allowsLoopback && origin?.isLoopback == true)
    }
}

extension VCRError {
    /// A request refused because no cassette is in force (``VCR/refusesNetworkWithoutCassette(to:)``).
    static func networkWithoutCassette(_ request: String, test: String?) -> VCRError {
        let setting = getenv("VCR_ALLOW_NETWORK") != nil
            ? "VCR_ALLOW_NETWORK=\(String(cString: getenv("VCR_ALLOW_NETWORK")))" : "allowsNetworkWithoutCassette = false"
        return VCRError(
            .networkWithoutCassette,
            "HTTPVCR refused \(request)\(test.map { ", made by test \($0)," } ?? ""): no cassette is in force and "
                + "\(setting) keeps requests off the network. Give the test a cassette (the .cassette trait, "
                + "VCRTestCase, withVCRCassette), or let this run reach the network: VCR_ALLOW_NETWORK=1, or "
                + "configuration.allowsNetworkWithoutCassette = true in VCR.setup.",
            request: request
        )
    }
}
