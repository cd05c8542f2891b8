import CassetteMutations
import Foundation
@testable import HTTPVCR
import Testing

/// The wire's parser against seeded mutants of valid requests: it never traps, every input parses or is refused
/// with a `WireError`, and bytes fed in pieces give what the same bytes fed at once give.
@Suite struct RequestParserFuzzTests {
    /// Small limits, so that mutants reach them.
    static let limits = WireLimits(headBytes: 2048, fields: 20, bodyBytes: 4096)

    static let seeds: [String] = [
        "GET /get?a=1&b=two HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n",
        "POST /post HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"name\":\"x\"}\n",
        "PUT /put HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\n",
        "HEAD / HTTP/1.0\r\nX-Multi: one\r\nX-Multi: two\r\n\r\n",
        "DELETE /anything/1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    ]

    /// What feeding a parser gives: the requests in order, then how it ended.
    struct Outcome: Equatable {
        var requests: [WireRequest] = []
        var error: WireError?
    }

    static func outcome(_ pieces: [ArraySlice<UInt8>]) -> Outcome {
        var parser = RequestParser(limits: limits)
        var outcome = Outcome()
        do throws(WireError) {
            for piece in pieces {
                parser.feed(piece)
                while let request = try parser.next() { outcome.requests.append(request) }
            }
            try parser.finish()
        } catch {
            outcome.error = error
        }
        return outcome
    }

    @Test func seedsParse() throws {
        for seed in Self.seeds {
            let outcome = Self.outcome([ArraySlice(Array(seed.utf8))])
            #expect(outcome.error == nil, "\(seed.debugDescription)")
            #expect(!outcome.requests.isEmpty)
        }
        let chunked = Self.outcome([ArraySlice(Array(Self.seeds[2].utf8))])
        #expect(chunked.requests.first?.body == Data("hello0123456789".utf8))
        #expect(Self.outcome([ArraySlice(Array(Self.seeds[4].utf8))]).requests.first?.fields.map(\.value) == ["one", "two"])
    }

    @Test func eachMalformationHasItsError() {
        let cases: [(String, WireError)] = [
            ("GET / HTTP/1.1\r\nHost: x\r\n", .truncated),
            ("GET / HTTP/1.1\nHost: x\n\n", .bareLineFeed),
            ("GET /\r\n\r\n", .badRequestLine),
            ("GET / HTTP/2.0\r\n\r\n", .unsupportedVersion),
            ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", .badField),
            ("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", .badField),
            ("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", .badContentLength),
            ("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", .badContentLength),
            ("POST / HTTP/1.1\r\nContent-Length: 99999\r\n\r\n", .bodyTooLarge),
            ("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", .conflictingFraming),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", .badFraming),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .badChunkSize),
            ("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", .badFraming),
            ("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", .truncated),
            ("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 3000) + "\r\n\r\n", .headTooLarge),
            ("GET / HTTP/1.1\r\n" + String(repeating: "X: 1\r\n", count: 21) + "\r\n", .tooManyFields),
        ]
        for (input, expected) in cases {
            #expect(Self.outcome([ArraySlice(Array(input.utf8))]).error == expected, "\(input.prefix(80).debugDescription)")
        }
    }

    @Test func tenThousandMutantsNeverTrapAndAgreeWhenFedInPieces() {
        var random = SplitMix64(seed: 29)
        var inputs: [[UInt8]] = []
        // Every seed split at every position, and fed a byte at a time.
        for seed in Self.seeds { inputs.append(Array(seed.utf8)) }
        while inputs.count < 10_000 {
            let seed = Array(Self.seeds[Int(random.next() % UInt64(Self.seeds.count))].utf8)
            inputs.append(Self.mutate(seed, &random))
        }
        var counts: [String: Int] = [:]
        var pieceFeeds = 0
        let start = Date()
        for (number, input) in inputs.enumerated() {
            let whole = Self.outcome([ArraySlice(input)])
            counts[whole.error?.kind ?? "parsed", default: 0] += 1
            // Seeds: every split; mutants: three random splits and, for every tenth, one byte at a time.
            var splits: [Int] = number < Self.seeds.count
                ? Array(0...input.count)
                : (0..<3).map { _ in input.isEmpty ? 0 : Int(random.next() % UInt64(input.count + 1)) }
            if number < Self.seeds.count { splits.append(-1) }
            for split in splits {
                let pieces = split < 0 ? input.indices.map { input[$0...$0] } : [input[..<split], input[split...]]
                let fed = Self.outcome(pieces)
                pieceFeeds += 1
                #expect(fed == whole, "input \(number) split at \(split): \(String(decoding: input.prefix(120), as: UTF8.self).debugDescription)")
                if fed != whole { return }
            }
            if number % 10 == 0 {
                #expect(Self.outcome(input.indices.map { input[$0...$0] }) == whole, "input \(number) byte by byte")
            }
        }
        let seconds = Date().timeIntervalSince(start)
        let report = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("wire fuzz: \(inputs.count) inputs, \(pieceFeeds) split feeds, \(String(format: "%.2f", seconds)) s: \(report)")
        #expect(inputs.count >= 10_000)
        #expect(counts["parsed", default: 0] > 500, "\(report)")
        #expect(counts.count >= 8, "most kinds of refusal are reached: \(report)")
    }

    static func mutate(_ seed: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = seed
        let rounds = 1 + Int(random.next() % 3)
        for _ in 0..<rounds {
            let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            switch random.next() % 10 {
            case 0: bytes = Array(bytes.prefix(position))
            case 1: if !bytes.isEmpty { bytes[position] ^= UInt8(1 << (random.next() % 8)) }
            case 2: if !bytes.isEmpty { bytes[position] = UInt8(truncatingIfNeeded: random.next()) }
            case 3: bytes.insert(contentsOf: Array("Content-Length: \(random.next() % 100_000_000_000)\r\n".utf8),
                                 at: Self.lineStart(in: bytes, random: &random))
            case 4: bytes.insert(contentsOf: Array("Transfer-Encoding: chunked\r\n".utf8),
                                 at: Self.lineStart(in: bytes, random: &random))
            case 5:
                let size = String(random.next() % (random.next() % 2 == 0 ? 64 : 1 << 40), radix: 16)
                bytes += Array("\(size)\r\n".utf8) + Array(repeating: 120, count: Int(random.next() % 80)) + [13, 10]
            case 6: if let crlf = Self.crlf(in: bytes, random: &random) { bytes.remove(at: crlf) }
            case 7: bytes.insert(contentsOf: Array(repeating: 65, count: Int(random.next() % 3000)), at: position)
            case 8: bytes.insert(contentsOf: Array(repeating: Array("X-F: v\r\n".utf8), count: Int(random.next() % 30))
                .flatMap { $0 }, at: Self.lineStart(in: bytes, random: &random))
            default: bytes += seed
            }
        }
        return bytes
    }

    /// Just after some CRLF (a field line's start), or 0.
    static func lineStart(in bytes: [UInt8], random: inout SplitMix64) -> Int {
        guard let crlf = crlf(in: bytes, random: &random) else { return 0 }
        return crlf + 2
    }

    static func crlf(in bytes: [UInt8], random: inout SplitMix64) -> Int? {
        let positions = bytes.indices.dropLast().filter { bytes[$0] == 13 && bytes[$0 + 1] == 10 }
        return positions.isEmpty ? nil : positions[Int(random.next() % UInt64(positions.count))]
    }
}
