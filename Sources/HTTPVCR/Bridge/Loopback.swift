import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// 127.0.0.1, the only address the wire uses, as the socket calls take it: for the server and for clients (tests).
package enum Loopback {
    /// A new TCP socket, or -1.
    package static func tcpSocket() -> Int32 {
        #if canImport(Glibc)
        socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    /// `bind(2)` to 127.0.0.1:`port` (0: a free one).
    package static func bind(_ socket: Int32, port: UInt16) -> Int32 {
        withAddress(port) { address, length in
            #if canImport(Glibc)
            Glibc.bind(socket, address, length)
            #else
            Darwin.bind(socket, address, length)
            #endif
        }
    }

    /// `connect(2)` to 127.0.0.1:`port`.
    package static func connect(_ socket: Int32, port: UInt16) -> Int32 {
        withAddress(port) { address, length in
            #if canImport(Glibc)
            Glibc.connect(socket, address, length)
            #else
            Darwin.connect(socket, address, length)
            #endif
        }
    }

    /// `listen(2)`.
    package static func listen(_ socket: Int32, backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(socket, backlog)
        #else
        Darwin.listen(socket, backlog)
        #endif
    }

    /// Writes all of `data` to `socket`; false when the peer is gone. MSG_NOSIGNAL: a closed peer must not raise
    /// SIGPIPE.
    package static func sendAll(_ data: Data, to socket: Int32) -> Bool {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                let sent = send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                #else
                let sent = send(socket, raw.baseAddress! + offset, raw.count - offset, 0)
                #endif
                if sent < 0 && errno == EINTR { continue }
                if sent <= 0 { return false }
                offset += sent
            }
            return true
        }
    }

    /// The port `socket` is bound to.
    package static func port(of socket: Int32) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    private static func withAddress(_ port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
