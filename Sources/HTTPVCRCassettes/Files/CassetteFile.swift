import Foundation

/// The kinds of file a tape can be read from, detected from the file's content.
public enum CassetteFormat: String, Sendable, CaseIterable {
    /// HTTPVCR's own format as pretty-printed JSON (the default).
    case json
    /// HTTPVCR's own format as an XML property list.
    case plist
    /// HAR 1.2, as written by browsers' developer tools, mitmproxy, Polly.js and Replay.
    case har
    /// YAHTTPVCR's tape, as JSON or as a property list.
    case yahttpvcr
    /// VCR.py's JSON serializer (`{"version": 1, "interactions": [...]}`).
    case vcrpy

    /// Written by another tool: HTTPVCR replays it but never records into it.
    public var isForeign: Bool {
        switch self {
        case .json, .plist: false
        case .har, .yahttpvcr, .vcrpy: true
        }
    }

    /// The format HTTPVCR writes for a file name: `.plist` is a property list, `.har` is HAR, anything else JSON.
    public static func forWriting(to url: URL) -> CassetteFormat {
        forWriting(extension: url.pathExtension)
    }

    /// ``forWriting(to:)`` for a file path.
    package static func forWriting(toPath path: String) -> CassetteFormat {
        let utf8 = path.utf8
        let nameStart = utf8.lastIndex(of: UInt8(ascii: "/")).map(utf8.index(after:)) ?? utf8.startIndex
        guard let dot = utf8[nameStart...].lastIndex(of: UInt8(ascii: ".")), dot != nameStart else { return .json }
        return forWriting(extension: String(path[utf8.index(after: dot)...]))
    }

    private static func forWriting(extension pathExtension: String) -> CassetteFormat {
        switch pathExtension.lowercased() {
        case "plist": .plist
        case "har": .har
        default: .json
        }
    }
}

/// Reads and writes cassette files: detects the format, turns the bytes into a ``Tape`` and back, and saves
/// atomically so that a failed write never leaves half a cassette behind.
public enum CassetteFile {
    /// Reads the file at `url`.
    /// - Throws: ``VCRError`` with code ``VCRError/Code/cassetteNotFound`` when there is no file, and
    ///   ``VCRError/Code/malformedCassette`` naming the file and the problem when it cannot be read.
    public static func read(at url: URL) throws(VCRError) -> (tape: Tape, format: CassetteFormat) {
        try read(atPath: url.path)
    }

    /// ``read(at:)`` by the file's path.
    package static func read(atPath path: String) throws(VCRError) -> (tape: Tape, format: CassetteFormat) {
        switch FileContents.read(atPath: path) {
        case let .success(data):
            return try decode(data, path: path)
        case .failure(.notFound):
            throw VCRError(.cassetteNotFound, "No cassette at \(path)", cassettePath: path, reason: "no such file")
        case let .failure(.unreadable(why)):
            throw VCRError.malformed(path, "cannot be read (\(why))")
        }
    }

    /// Turns a file's bytes into a tape. `path` names the file in errors; its extension helps detection.
    public static func decode(_ data: Data, path: String) throws(VCRError) -> (tape: Tape, format: CassetteFormat) {
        guard !data.isEmpty else { throw VCRError.malformed(path, "the file is empty") }
        let first = data.first
        let isPropertyList = (first == UInt8(ascii: "<") || first == UInt8(ascii: "b"))
            && (data.starts(with: Array("<?xml".utf8)) || data.starts(with: Array("bplist".utf8))
                || data.starts(with: Array("<!DOCTYPE plist".utf8)) || data.starts(with: Array("<plist".utf8)))
        // Our own JSON in exactly the writer's layout is read in place (Docs/Performance.md says why there are two
        // readers); everything else, and whatever it declines, is read into one value and its fields read from there.
        if !isPropertyList, HTTPVCRFormat.looksLikeJSONDocument(data),
           let tape = HTTPVCRFormat.tape(readingWrittenLayout: data) {
            return (tape, .json)
        }
        do throws(DecodeFailure) {
            let document = try value(of: data, isPropertyList: isPropertyList)
            if HTTPVCRFormat.isReadable(document) {
                return (try HTTPVCRFormat.tape(from: document), isPropertyList ? .plist : .json)
            }
            if path.lowercased().hasSuffix(".har") || HARFormat.isReadable(document) {
                return (try HARFormat.tape(from: document), .har)
            }
            if YAHTTPVCRFormat.isReadable(document) { return (try YAHTTPVCRFormat.tape(from: document), .yahttpvcr) }
            if VCRPyFormat.isReadable(document) { return (try VCRPyFormat.tape(from: document), .vcrpy) }
        } catch {
            throw VCRError.malformed(path, error.reason)
        }
        throw VCRError.malformed(
            path,
            "not a cassette format HTTPVCR knows (HTTPVCR JSON or plist, HAR 1.2, YAHTTPVCR, VCR.py JSON)"
        )
    }

    /// A file's bytes as one value: JSON through ``LosslessJSONReader``, a property list through Foundation's parser
    /// (after ``NestingLimit`` for XML ones). What is not valid JSON or property list is said with where it is.
    package static func value(of data: Data, isPropertyList: Bool) throws(DecodeFailure) -> JSONValue {
        guard isPropertyList else {
            switch LosslessJSONReader.document(utf8JSON(data)) {
            case let .success(value): return value
            case let .failure(failure): throw DecodeFailure("not valid JSON (truncated or corrupt?): \(failure.reason)")
            }
        }
        if !data.starts(with: Array("bplist".utf8)), NestingLimit.isExceeded(inXMLPropertyList: data) {
            throw DecodeFailure("not valid property list: nested more than \(NestingLimit.maximumDepth) levels deep")
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw DecodeFailure("not valid property list (truncated or corrupt?): \(Self.reason(error))")
        }
        guard let value = JSONValue(propertyList: object) else {
            throw DecodeFailure("not valid property list: it holds a value that is not a property list's")
        }
        return value
    }

    /// JSON written in UTF-16 or UTF-32 (told by its byte order mark, or by the zero bytes around its first
    /// character, RFC 4627) as UTF-8, which is all ``LosslessJSONReader`` reads; anything else as it is.
    private static func utf8JSON(_ data: Data) -> Data {
        guard data.count >= 4, data.prefix(4).contains(0) || data.first == 0xFE || data.first == 0xFF else {
            return data
        }
        let bytes = Array(data.prefix(4))
        let encoding: String.Encoding? = switch (bytes[0], bytes[1], bytes[2], bytes[3]) {
        case (0x00, 0x00, 0xFE, 0xFF), (0x00, 0x00, 0x00, _): .utf32BigEndian
        case (0xFF, 0xFE, 0x00, 0x00), (_, 0x00, 0x00, 0x00): .utf32LittleEndian
        case (0xFE, 0xFF, _, _), (0x00, _, 0x00, _): .utf16BigEndian
        case (0xFF, 0xFE, _, _), (_, 0x00, _, 0x00): .utf16LittleEndian
        default: nil
        }
        guard let encoding, var text = String(data: data, encoding: encoding) else { return data }
        if text.first == "\u{FEFF}" { text.removeFirst() }
        return Data(text.utf8)
    }

    /// The bytes of `tape` in `format`. Foreign formats HTTPVCR cannot write (YAHTTPVCR, VCR.py) throw.
    public static func encode(_ tape: Tape, as format: CassetteFormat) throws(VCRError) -> Data {
        switch format {
        case .json:
            return HTTPVCRFormat.document(tape, structuresBodies: true).serialized()
        case .plist:
            do {
                return try PropertyListSerialization.data(
                    fromPropertyList: HTTPVCRFormat.document(tape).foundationObject ?? [:],
                    format: .xml,
                    options: 0
                )
            } catch {
                throw VCRError(.saveFailed, "Cannot write the tape as a property list: \(reason(error))")
            }
        case .har:
            return HARFormat.document(tape).serialized()
        case .yahttpvcr, .vcrpy:
            throw VCRError(.saveFailed, "HTTPVCR reads \(format.rawValue) cassettes but does not write them")
        }
    }

    /// Writes `tape` to `url` atomically: a temporary file next to it, then a rename. Missing folders are
    /// created. On failure the file that was there is untouched.
    public static func write(_ tape: Tape, to url: URL, as format: CassetteFormat) throws(VCRError) {
        let data = try encode(tape, as: format)
        try write(data, to: url)
    }

    /// Writes bytes to `url` atomically (see ``write(_:to:as:)``).
    package static func write(_ data: Data, to url: URL) throws(VCRError) {
        do throws(AtomicFileWrite.Failure) {
            try AtomicFileWrite.replaceContents(of: url, with: data)
        } catch {
            let file = error.linkTarget.map { "\(url.path) (a link to \($0))" } ?? url.path
            throw VCRError(
                .saveFailed,
                error.isReplaced
                    ? "Saved cassette \(file), but \(error.reason), so the save may not survive a crash."
                    : "Cannot save cassette \(file): \(error.reason). The previous file, if any, is unchanged.",
                cassettePath: url.path,
                reason: error.reason
            )
        }
    }

    package static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let debug = nsError.userInfo[NSDebugDescriptionErrorKey] as? String { return debug }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError { return underlying.localizedDescription }
        return nsError.localizedDescription
    }
}
