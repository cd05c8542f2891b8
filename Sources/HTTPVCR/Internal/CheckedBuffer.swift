/// Reading an element where it is: passed on from `Array`'s subscript, an element is copied out first (for a recorded
/// scene, a copy of everything it holds).
extension UnsafeBufferPointer {
    /// The element at `position`, read in place, and checked in release builds too (the plain subscript is not).
    subscript(checked position: Int) -> Element {
        unsafeAddress {
            precondition(indices.contains(position), "position \(position) is outside a buffer of \(count)")
            return baseAddress.unsafelyUnwrapped + position
        }
    }
}
