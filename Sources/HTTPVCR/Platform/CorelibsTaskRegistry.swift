#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking

/// corelibs' task registry (`URLSession._TaskRegistry`, internal): how each of a session's tasks was made, and so
/// who hears of its events. Its table (`behaviours`, `[Int: _Behaviour]`) is found once, by the registry's type.
struct TaskRegistryTable: @unchecked Sendable {
    private let field: StoredField
    private let type: any TaskTable.Type

    /// nil when the registry has no such table, or it is not keyed by task identifier.
    init?(registryType: Any.Type) {
        let unwrapped = (registryType as? any OptionalProtocol.Type)?.wrappedType ?? registryType
        guard let registryClass = unwrapped as? AnyClass,
              let field = StoredField("behaviours", of: registryClass),
              let type = field.type as? any TaskTable.Type
        else { return nil }
        self.field = field
        self.type = type
    }

    /// How the task `taskIdentifier` of the session whose registry is `registry` was made; nil when it is not
    /// there. Read on the session's work queue.
    func kind(of taskIdentifier: Int, in registry: AnyObject) -> TaskRegistryEntry.Kind? {
        let address = field.address(in: registry)
        return TaskRegistryEntry.read(
            type.entryBytes(at: address, for: taskIdentifier),
            entry: { type.entry(at: address, for: taskIdentifier) }
        )
    }
}

/// Lets an optional field's type be seen through.
private protocol OptionalProtocol {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalProtocol {
    fileprivate static var wrappedType: Any.Type { Wrapped.self }
}

/// An entry of corelibs' task registry (`URLSession._TaskRegistry._Behaviour`, an internal enum): how its task was
/// made. Reading one with `Mirror` decodes the payload's function type each time (as much as the rest of a replayed
/// request: Docs/Performance.md). So each case's tag is learned once with `Mirror`, then read from the entry's bytes:
/// the tag in its last byte, the delegate of a `…WithTaskDelegate` case in the word at offset 16. Each learned fact
/// is checked against `Mirror` the first time it is used and against simple invariants every time; where either
/// fails, `Mirror` reads every entry (slow, never wrong).
enum TaskRegistryEntry {
    enum Kind {
        case callDelegate
        case completionHandler(taskDelegate: (any URLSessionTaskDelegate)?)
    }

    /// `_Behaviour`'s cases, by their labels: compared once, when a tag is learned, not on every read.
    fileprivate enum Case {
        case callDelegate, completionHandler, completionHandlerWithTaskDelegate, unknown

        init(label: String) {
            switch label {
            case "callDelegate": self = .callDelegate
            case "dataCompletionHandler", "downloadCompletionHandler": self = .completionHandler
            case "dataCompletionHandlerWithTaskDelegate", "downloadCompletionHandlerWithTaskDelegate":
                self = .completionHandlerWithTaskDelegate
            default: self = .unknown
            }
        }
    }

    private struct Learned {
        /// What each tag byte stands for, indexed by the byte.
        var cases = [Case?](repeating: nil, count: 256)
        /// The delegate word was seen to hold the delegate `Mirror` found (an object, and nil as zero).
        var delegateWordHoldsDelegate = false
        var delegateWordIsZeroForNil = false
        /// The bytes did not say what `Mirror` said: read with `Mirror` only.
        var isBroken = false
    }

    private static let learned = Locked(Learned(), level: .leaf)
    private static let delegateWord = 16

    /// `bytes`: the entry's, if it is laid out as expected; `entry`: the entry itself, for `Mirror` (nil when the
    /// task is not in the registry).
    static func read(_ bytes: Bytes?, entry: () -> Any?) -> Kind? {
        guard let bytes else { return entry().flatMap(readWithMirror) }
        // What is known so far, under one lock: this runs for every request.
        let (isBroken, known, holds, zeroForNil) = learned.withLock {
            ($0.isBroken, $0.cases[Int(bytes.tag)], $0.delegateWordHoldsDelegate, $0.delegateWordIsZeroForNil)
        }
        guard !isBroken else { return entry().flatMap(readWithMirror) }
        guard let known = known ?? entry().map({ learn($0, bytes) }) else { return nil }
        guard bytes.fits(known) else { return entry().flatMap(markBroken) }
        switch known {
        case .callDelegate:
            return .callDelegate
        case .completionHandler:
            return .completionHandler(taskDelegate: nil)
        case .completionHandlerWithTaskDelegate:
            if bytes.delegate == 0, zeroForNil { return .completionHandler(taskDelegate: nil) }
            if bytes.delegate != 0, holds, let pointer = UnsafeRawPointer(bitPattern: bytes.delegate) {
                // The registry holds the delegate, and is read on its session's work queue.
                let object = Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
                return .completionHandler(taskDelegate: object as? any URLSessionTaskDelegate)
            }
            // Not seen yet: read it with Mirror, and learn whether the word holds it.
            guard let entry = entry() else { return nil }
            let kind = readWithMirror(entry)
            guard case let .completionHandler(delegate)? = kind else { return markBroken(entry) }
            learned.withLock { learned in
                if let delegate, UInt(bitPattern: Unmanaged.passUnretained(delegate as AnyObject).toOpaque()) == bytes.delegate {
                    learned.delegateWordHoldsDelegate = true
                } else if delegate == nil, bytes.delegate == 0 {
                    learned.delegateWordIsZeroForNil = true
                }
            }
            return kind
        case .unknown:
            return entry().flatMap(markBroken)
        }
    }

    /// What matters of an entry's bytes.
    struct Bytes {
        let tag: UInt8
        let firstWord: UInt
        let delegate: UInt
        let isPayloadZero: Bool

        /// nil when the entry is not laid out as one payload of four words and a tag byte.
        init?<Entry>(of value: Entry) {
            guard MemoryLayout<Entry>.size == 4 * MemoryLayout<UInt>.size + 1 else { return nil }
            self = withUnsafeBytes(of: value) { raw in
                Bytes(
                    tag: raw[raw.count - 1],
                    firstWord: raw.loadUnaligned(as: UInt.self),
                    delegate: raw.loadUnaligned(fromByteOffset: delegateWord, as: UInt.self),
                    isPayloadZero: (0..<4).allSatisfy {
                        raw.loadUnaligned(fromByteOffset: $0 * MemoryLayout<UInt>.size, as: UInt.self) == 0
                    }
                )
            }
        }

        private init(tag: UInt8, firstWord: UInt, delegate: UInt, isPayloadZero: Bool) {
            self.tag = tag
            self.firstWord = firstWord
            self.delegate = delegate
            self.isPayloadZero = isPayloadZero
        }

        /// What every entry of a case must show: no payload for `callDelegate`, a completion handler's function
        /// for the others.
        fileprivate func fits(_ known: Case) -> Bool {
            known == .callDelegate ? isPayloadZero : firstWord != 0
        }
    }

    /// Learns the case of `bytes`' tag from `Mirror`.
    private static func learn(_ entry: Any, _ bytes: Bytes) -> Case {
        let known = Case(label: label(of: entry))
        learned.withLock { $0.cases[Int(bytes.tag)] = known }
        return known
    }

    private static func markBroken(_ entry: Any) -> Kind? {
        learned.withLock { $0.isBroken = true }
        return readWithMirror(entry)
    }

    /// A case with a payload shows it as its one child; one without (`callDelegate`) only in its description.
    private static func label(of entry: Any) -> String {
        Mirror(reflecting: entry).children.first?.label ?? String(describing: entry)
    }

    private static func readWithMirror(_ entry: Any) -> Kind? {
        switch Case(label: label(of: entry)) {
        case .callDelegate:
            return .callDelegate
        case .completionHandler:
            return .completionHandler(taskDelegate: nil)
        case .completionHandlerWithTaskDelegate:
            // (completion, delegate?)
            let payload = Mirror(reflecting: entry).children.first?.value
            let delegate = payload.flatMap { Mirror(reflecting: $0).children.dropFirst().first?.value }
                .flatMap { $0 as? any URLSessionTaskDelegate }
            return .completionHandler(taskDelegate: delegate)
        case .unknown:
            return nil
        }
    }
}

/// corelibs' task registry table (`[Int: _Behaviour]`, its value type internal), read through its own type.
fileprivate protocol TaskTable {
    static func entry(at address: UnsafeMutableRawPointer, for taskIdentifier: Int) -> Any?
    /// The entry's bytes, read where it is, without boxing it (as ``entry(at:for:)`` does).
    static func entryBytes(at address: UnsafeMutableRawPointer, for taskIdentifier: Int) -> TaskRegistryEntry.Bytes?
}

extension Dictionary: TaskTable where Key == Int {
    fileprivate static func entry(at address: UnsafeMutableRawPointer, for taskIdentifier: Int) -> Any? {
        address.assumingMemoryBound(to: Self.self).pointee[taskIdentifier]
    }

    fileprivate static func entryBytes(
        at address: UnsafeMutableRawPointer, for taskIdentifier: Int
    ) -> TaskRegistryEntry.Bytes? {
        // Through an index, never an optional of the (unknown) value type: making that type's metadata cost more
        // than the lookup.
        let table = address.assumingMemoryBound(to: Self.self)
        guard let index = table.pointee.index(forKey: taskIdentifier) else { return nil }
        return TaskRegistryEntry.Bytes(of: table.pointee.values[index])
    }
}

#endif
