import Foundation
import HTTPVCRCassettes

/// What kind of value a volatile value is: two values of one shape match, whatever their text.
enum VolatileShape: String, Sendable, CaseIterable {
    case empty
    /// `8-4-4-4-12` hexadecimal digits.
    case uuid
    /// ISO 8601 (`2026-11-29T10:15:00Z`, `2026-11-29`), AWS's basic form (`20261129T101500Z`), or Unix time in
    /// seconds or milliseconds (9, 10, 12 or 13 digits).
    case timestamp
    /// Any other number.
    case number
    /// Hexadecimal digits, with a letter among them (a digest, a signature).
    case hex
    /// Letters, digits and `-_+/=.~` (a nonce, base64, a token).
    case token
    case text

    /// The shape of `value` as written (percent-decoded already, where it came from a URL or a form).
    init(of value: some StringProtocol) {
        let bytes = Array(value.utf8)
        self = Self.shape(of: bytes)
    }

    private static func shape(of bytes: [UInt8]) -> VolatileShape {
        if bytes.isEmpty { return .empty }
        // A placeholder is its own shape: a request viewed twice is viewed as once.
        if bytes.starts(with: placeholderPrefix.utf8),
           let shape = VolatileShape(rawValue: String(decoding: bytes.dropFirst(placeholderPrefix.utf8.count), as: UTF8.self)) {
            return shape
        }
        if isUUID(bytes) { return .uuid }
        if isTimestamp(bytes) { return .timestamp }
        if isNumber(bytes) { return .number }
        if bytes.allSatisfy(isHexDigit), bytes.contains(where: isLetter) { return .hex }
        if bytes.allSatisfy({ isLetter($0) || isDigit($0) || "-_+/=.~".utf8.contains($0) }) { return .token }
        return .text
    }

    private static func isUUID(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 36 else { return false }
        return bytes.indices.allSatisfy { [8, 13, 18, 23].contains($0) ? bytes[$0] == Byte.minus : isHexDigit(bytes[$0]) }
    }

    private static func isTimestamp(_ bytes: [UInt8]) -> Bool {
        if bytes.allSatisfy(isDigit) { return [9, 10, 12, 13].contains(bytes.count) }
        // 20261129T101500Z
        if bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") {
            return bytes[0..<8].allSatisfy(isDigit) && bytes[9..<15].allSatisfy(isDigit)
        }
        // 2026-11-29, then anything a time and zone are written with.
        guard bytes.count >= 10, bytes[0..<4].allSatisfy(isDigit), bytes[4] == Byte.minus,
              bytes[5..<7].allSatisfy(isDigit), bytes[7] == Byte.minus, bytes[8..<10].allSatisfy(isDigit)
        else { return false }
        return bytes.dropFirst(10).allSatisfy { isDigit($0) || "T :.+-Z".utf8.contains($0) }
    }

    private static func isNumber(_ bytes: [UInt8]) -> Bool {
        let digits = bytes.first == Byte.minus ? bytes.dropFirst() : bytes[...]
        guard let first = digits.first, isDigit(first) else { return false }
        return digits.allSatisfy { isDigit($0) || $0 == Byte.dot } && digits.filter { $0 == Byte.dot }.count <= 1
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= Byte.zero && byte <= Byte.nine }
    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "f"))
    }

    /// What a volatile value is replaced with where requests are compared: the same for every value of the shape.
    var placeholder: String { Self.placeholderPrefix + rawValue }

    private static let placeholderPrefix = "volatile-"
}
