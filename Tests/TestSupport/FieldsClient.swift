import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPVCR

/// The smallest HTTP/1.1 client that keeps a response's header fields as they came, repeated names and all
/// (URLSession joins them): a GET to an IPv4 address on a connection of its own, closed after the response. Enough
/// for the door's tests against the local httpbin.
public enum FieldsClient {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The body, and the response with its fields in the order the server sent them.
    public static func get(_ url: URL) async throws -> (Data, RecordedResponse) {
        try await withCheckedThrowingContinuation { continuation in
            // Blocking reads, off the cooperative pool.
            Thread { continuation.resume(with: Result { try getWaiting(url) }) }.start()
        }
    }

    private static func getWaiting(_ url: URL) throws -> (Data, RecordedResponse) {
        guard let host = url.host, let port = url.port else { throw Failure("\(url): needs a host and a port") }
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure("socket: \(errno)") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure("connect to \(host):\(port): \(errno)") }

        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        let request = Array("GET \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw Failure("send: \(errno)")
        }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count >= 0 else { throw Failure("read: \(errno)") }
            if count == 0 { break }
            received.append(contentsOf: buffer[..<count])
        }
        return try parse(received, url: url)
    }

    /// A response read to the end of its connection: status line, fields, then the body as it is (no chunked
    /// transfer coding: `Connection: close` answers carry a length or end with the connection).
    private static func parse(_ received: Data, url: URL) throws -> (Data, RecordedResponse) {
        guard let end = received.firstRange(of: Data("\r\n\r\n".utf8)) else { throw Failure("no end of the head") }
        let lines = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines[0].split(separator: " ", maxSplits: 2)
        guard status.count >= 2, let code = Int(status[1]) else { throw Failure("status line: \(lines[0])") }
        var fields: [RecordedHeader] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw Failure("field line: \(line)") }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields.append(RecordedHeader(String(line[..<colon]), value))
        }
        guard fields[field: "Transfer-Encoding"] == nil else { throw Failure("a chunked body is not read here") }
        let response = RecordedResponse(
            url: url.absoluteString, statusCode: code, httpVersion: String(status[0]), headers: fields
        )
        return (Data(received[end.upperBound...]), response)
    }
}
