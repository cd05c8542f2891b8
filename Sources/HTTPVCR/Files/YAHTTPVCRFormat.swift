import Foundation

// Placeholder until the reader is written (issue 5).
enum YAHTTPVCRFormat {
    static func isReadable(_ object: Any) -> Bool { false }
    static func tape(from object: Any) throws(DecodeFailure) -> Tape {
        throw DecodeFailure("YAHTTPVCR cassettes are not supported yet")
    }
}
