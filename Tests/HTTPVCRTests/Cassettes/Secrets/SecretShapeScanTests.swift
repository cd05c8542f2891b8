import Foundation
@testable import HTTPVCR
import Testing

/// The scan that decides which shapes' regular expressions run at all (anchors found by pairs of bytes): a shape
/// is found wherever its anchor stands (first bytes, last bytes, either case where the shape ignores it), and
/// short texts are scanned without trouble.
@Suite struct SecretShapeScanTests {
    static let token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

    func shapes(in text: String) -> [String] {
        SecretShapes.matches(in: text, isPlaceholder: { _ in false }).map(\.shape)
    }

    @Test func anAnchorIsFoundAtEitherEndOfTheText() {
        #expect(shapes(in: Self.token) == ["GitHub token"])
        #expect(shapes(in: "x=" + Self.token) == ["GitHub token"])
        #expect(shapes(in: "a " + "rk_live_" + "51HxYzAbCdEfGhIjKlMnOpQr") == ["Stripe secret key"])
    }

    @Test(arguments: ["Bearer", "bearer", "BEARER", "bEaReR"])
    func aBearerTokenIsFoundInAnyCase(scheme: String) {
        #expect(shapes(in: "\(scheme) abcdef0123456789") == ["bearer token"])
    }

    @Test(arguments: ["", "g", "gh", "ey", "be", "bench.local/item/1", "xo"])
    func textsWithoutAWholeAnchorHoldNoShape(text: String) {
        #expect(shapes(in: text).isEmpty)
    }
}
