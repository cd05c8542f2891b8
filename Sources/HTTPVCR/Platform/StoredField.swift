// swift-corelibs-foundation only: the runtime's field records are read through the standard library's reflection
// SPI, which only its own platforms' interfaces carry.
#if canImport(FoundationNetworking)
@_spi(Reflection) import Swift
import Synchronization

/// A stored property of a type HTTPVCR does not own, found by name in the runtime's field records, once, and read
/// or written through the type those records give it: never a guessed layout. A field that was renamed or retyped
/// is not found, and its user degrades (``CorelibsPlatform`` says so once).
struct StoredField: @unchecked Sendable {
    /// From the start of the instance (classes) or of the value (structs).
    let offset: Int
    /// The field's type, as the runtime knows it (often a type internal to its module).
    let type: Any.Type

    /// The field `name` of `owner`, declared by it or by a superclass (the runtime's walk includes them).
    init?(_ name: String, of owner: Any.Type) {
        var found: (offset: Int, type: Any.Type)?
        // `.classType` (a `static var`, which Swift 6 refuses to read here) is bit 0.
        let options = owner is AnyClass ? _EachFieldOptions(rawValue: 1) : _EachFieldOptions()
        _ = _forEachField(of: owner, options: options) { fieldName, offset, type, _ in
            guard String(cString: fieldName) == name else { return true }
            found = (offset, type)
            return false
        }
        guard let found else { return nil }
        (offset, type) = found
    }

    /// Where the field is in `object`, valid while `object` is alive.
    func address(in object: AnyObject) -> UnsafeMutableRawPointer {
        Unmanaged.passUnretained(object).toOpaque().advanced(by: offset)
    }

    /// The field's value in `object`, whatever its type.
    func value(in object: AnyObject) -> Any {
        let address = address(in: object)
        func read<Field>(_: Field.Type) -> Any { address.assumingMemoryBound(to: Field.self).pointee }
        return _openExistential(type, do: read)
    }

    /// The field's value in `object` as a `Wanted`, cast from the field's own type: without boxing it as `Any` first
    /// (``value(in:)``), which costs as much again as the cast.
    func value<Wanted>(in object: AnyObject, as _: Wanted.Type) -> Wanted? {
        let address = address(in: object)
        func read<Field>(_: Field.Type) -> Wanted? { address.assumingMemoryBound(to: Field.self).pointee as? Wanted }
        return _openExistential(type, do: read)
    }

    /// The object a field of class type holds in `object` (a strong reference is one pointer), without boxing it as
    /// ``value(in:)`` does; nil for a field of another type.
    func object(in object: AnyObject) -> AnyObject? {
        guard type is AnyClass, let pointer = address(in: object).load(as: UnsafeRawPointer?.self) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// The field's size, from its type.
    var size: Int {
        func size<Field>(_: Field.Type) -> Int { MemoryLayout<Field>.size }
        return _openExistential(type, do: size)
    }

    /// The field's value in the struct `value`, whatever its type.
    func value<Value>(inValue value: Value) -> Any {
        withUnsafeBytes(of: value) { bytes in
            let address = UnsafeMutableRawPointer(mutating: bytes.baseAddress!).advanced(by: offset)
            func read<Field>(_: Field.Type) -> Any { address.assumingMemoryBound(to: Field.self).pointee }
            return _openExistential(type, do: read)
        }
    }

    /// Stores `value` in `object`'s field, if the field is of type `Field`. Returns whether it did.
    @discardableResult
    func set<Field>(_ value: Field, in object: AnyObject) -> Bool {
        guard type == Field.self else { return false }
        address(in: object).assumingMemoryBound(to: Field.self).pointee = value
        return true
    }
}

/// A field that holds an `Object` through a class-bound existential, or an optional of one (`URLSessionProtocol!`),
/// whose protocol may be internal. A cast from the field's type on every read costs more
/// than the rest of the read (Docs/Performance.md). Swift lays such an
/// existential out as the object's reference, then its witness tables (nil: a null reference); so once a cast has
/// found the object in the field's first word, that word is read instead.
final class ExistentialObjectField<Object: AnyObject>: Sendable {
    private let field: StoredField
    private let firstWordIsObject = Atomic(false)

    init(_ field: StoredField) {
        self.field = field
    }

    /// The object the field holds in `owner`, if it is an `Object`.
    func object(in owner: AnyObject) -> Object? {
        let firstWord = field.address(in: owner).load(as: UnsafeRawPointer?.self)
        if firstWordIsObject.load(ordering: .relaxed) {
            guard let firstWord else { return nil }
            return Unmanaged<AnyObject>.fromOpaque(firstWord).takeUnretainedValue() as? Object
        }
        let object = field.value(in: owner, as: Object.self)
        if let object, firstWord == UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()),
           field.size.isMultiple(of: MemoryLayout<UnsafeRawPointer>.size) {
            firstWordIsObject.store(true, ordering: .relaxed)
        }
        return object
    }
}
#endif
