import Foundation

/// The reader's numbers: chapter numbers, status and error codes as `Int`, scene times as `Double`, each as the
/// one reader would read it or not at all.
extension WrittenLayoutReader {
    /// A whole number written without fraction or exponent that fits in an `Int`.
    package mutating func integer() throws(NotTheLayout) -> Int {
        skipWhitespace()
        let isNegative = position < bytes.count && bytes[position] == Byte.minus
        if isNegative { position += 1 }
        let start = position
        var value = 0
        while position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) {
            let digit = Int(bytes[position] - Byte.zero)
            let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowAdd) = isNegative
                ? shifted.subtractingReportingOverflow(digit)
                : shifted.addingReportingOverflow(digit)
            guard !overflowShift, !overflowAdd else { throw NotTheLayout() }
            value = next
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || bytes[start] != Byte.zero else { throw NotTheLayout() }
        if position < bytes.count, [Byte.dot, UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) {
            throw NotTheLayout()
        }
        return value
    }

    /// A JSON number that is a normal `Double` or zero: the one reader refuses some a parser would round (`1e-400`), so
    /// those are left to it.
    mutating func finiteNumber() throws(NotTheLayout) -> Double {
        skipWhitespace()
        let start = position
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        func digits(_ reader: inout WrittenLayoutReader, inFraction: Bool) -> Int {
            let first = reader.position
            while reader.position < reader.bytes.count, (Byte.zero...Byte.nine).contains(reader.bytes[reader.position]) {
                let digit = UInt64(reader.bytes[reader.position] - Byte.zero)
                if significantDigits > 0 || digit != 0 { significantDigits += 1 }
                if significantDigits <= 19 { mantissa = mantissa &* 10 &+ digit }
                if inFraction { fractionDigits += 1 }
                reader.position += 1
            }
            return reader.position - first
        }
        let isNegative = position < bytes.count && bytes[position] == Byte.minus
        if isNegative { position += 1 }
        let integerStart = position
        let integerDigits = digits(&self, inFraction: false)
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != Byte.zero else { throw NotTheLayout() }
        if position < bytes.count, bytes[position] == Byte.dot {
            position += 1
            guard digits(&self, inFraction: true) > 0 else { throw NotTheLayout() }
        }
        let hasExponent = position < bytes.count && bytes[position] | 0x20 == UInt8(ascii: "e")
        // Written times (`0.0`, `0.012345`): a whole number below 2^53 over an exact power of ten is rounded once,
        // by the division, so it is what any correct parser makes of the text.
        if !hasExponent, significantDigits <= 15, fractionDigits < Self.exactPowersOfTen.count {
            let magnitude = Double(mantissa) / Self.exactPowersOfTen[fractionDigits]
            return isNegative ? -magnitude : magnitude
        }
        let mantissaHasNonzeroDigit = significantDigits > 0
        if hasExponent {
            position += 1
            if position < bytes.count, bytes[position] == Byte.plus || bytes[position] == Byte.minus { position += 1 }
            guard digits(&self, inFraction: false) > 0 else { throw NotTheLayout() }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isNormal || (value == 0 && !mantissaHasNonzeroDigit) else {
            throw NotTheLayout()
        }
        return value
    }

    /// 1e0 through 1e22, every one exact in a `Double`.
    private static let exactPowersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }
}
