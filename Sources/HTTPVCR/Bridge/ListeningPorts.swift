import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPVCRCassettes

/// Which TCP ports a launched process and its family listen on: read from /proc on Linux, from libproc on macOS.
/// What ``LaunchedProcess/listeningPorts`` reports.
enum ListeningPorts {
    /// What the system showed at one moment, read once for any number of processes: on Linux the process table and
    /// the listening sockets (/proc/net/tcp can hold thousands of lines on a busy machine); on macOS nothing, libproc
    /// is asked about each process.
    struct Snapshot {
        #if os(Linux)
        /// Every process.
        let processes: [ProcessEntry]
        /// The sockets listening where a loopback request reaches, by inode, and their ports.
        let listening: [UInt64: UInt16]
        #endif

        init() {
            #if os(Linux)
            // The sockets first: one made after this is missed, rather than seen in a process and not as listening.
            listening = ListeningPorts.listeningSockets(inTable: "/proc/net/tcp")
                .merging(ListeningPorts.listeningSockets(inTable: "/proc/net/tcp6")) { first, _ in first }
            processes = listening.isEmpty ? [] : ListeningPorts.processTable()
            #endif
        }

        /// Whether any process may listen on `port`: false lets a caller skip looking at each process.
        func mayListen(onPort port: UInt16) -> Bool {
            #if os(Linux)
            listening.values.contains(port)
            #else
            true
            #endif
        }

        /// The TCP ports in LISTEN state, on a loopback address or on any address, held by a process of process
        /// group `group` or by a descendant of one of them or of `leader`. Empty on platforms other than Linux and
        /// macOS.
        func ports(heldByGroup group: Int32, orDescendantsOf leader: Int32?) -> Set<UInt16> {
            #if os(Linux)
            guard !listening.isEmpty else { return [] }
            var members = Set(processes.filter { $0.group == group }.map(\.pid))
            if let leader { members.insert(leader) }
            let children = Dictionary(grouping: processes, by: \.parent).mapValues { $0.map(\.pid) }
            members = ListeningPorts.withDescendants(members, childrenOf: children)
            return Set(ListeningPorts.socketInodes(of: members).compactMap { listening[$0] })
            #elseif os(macOS)
            var members = Set(ListeningPorts.pids { proc_listpgrppids(group, $0, $1) })
            if let leader { members.insert(leader) }
            var queue = Array(members)
            while let parent = queue.popLast() {
                for child in ListeningPorts.pids({ proc_listchildpids(parent, $0, $1) })
                where members.insert(child).inserted {
                    queue.append(child)
                }
            }
            return members.reduce(into: []) { ports, pid in ports.formUnion(ListeningPorts.listening(heldBy: pid)) }
            #else
            return []
            #endif
        }
    }

    /// `pids` and all their descendants, children found in `childrenOf`.
    static func withDescendants(_ pids: Set<Int32>, childrenOf: [Int32: [Int32]]) -> Set<Int32> {
        var found = pids
        var queue = Array(pids)
        while let parent = queue.popLast() {
            for child in childrenOf[parent] ?? [] where found.insert(child).inserted {
                queue.append(child)
            }
        }
        return found
    }

    /// Whether an address (its bytes in network order) is a loopback one (127/8, ::1, ::ffff:127/104) or the any
    /// address (0.0.0.0, ::, ::ffff:0.0.0.0): one a request to 127.0.0.1 or ::1 reaches.
    static func acceptsLoopback(_ address: [UInt8]) -> Bool {
        switch address.count {
        case 4:
            return address[0] == 127 || address.allSatisfy { $0 == 0 }
        case 16:
            let head = address[0..<10]
            if address[0..<15].allSatisfy({ $0 == 0 }) { return address[15] <= 1 }
            if head.allSatisfy({ $0 == 0 }) && address[10] == 0xff && address[11] == 0xff {
                return acceptsLoopback(Array(address[12..<16]))
            }
            return false
        default:
            return false
        }
    }

    #if os(Linux)
    /// One line of /proc/PID/stat, the fields wanted.
    struct ProcessEntry {
        var pid: Int32
        var parent: Int32
        var group: Int32
    }

    /// Every process /proc shows.
    static func processTable() -> [ProcessEntry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name in
            guard let pid = Int32(name), let stat = readFile("/proc/\(name)/stat") else { return nil }
            return parseStat(String(decoding: stat, as: UTF8.self), pid: pid)
        }
    }

    /// The parent and group from /proc/PID/stat: `pid (comm) state ppid pgrp …`. The command name may hold spaces
    /// and parentheses of its own, so the fields are read after the last `)`.
    static func parseStat(_ stat: String, pid: Int32) -> ProcessEntry? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 2, let parent = Int32(fields[1]), let group = Int32(fields[2]) else { return nil }
        return ProcessEntry(pid: pid, parent: parent, group: group)
    }

    /// The inodes of the sockets `pids` hold open: their /proc/PID/fd links read `socket:[INODE]`.
    static func socketInodes(of pids: Set<Int32>) -> Set<UInt64> {
        var inodes = Set<UInt64>()
        var buffer = [CChar](repeating: 0, count: 64)
        for pid in pids {
            let folder = "/proc/\(pid)/fd"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                let count = readlink("\(folder)/\(fd)", &buffer, buffer.count - 1)
                guard count > 0 else { continue }
                let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                guard target.hasPrefix("socket:["), target.hasSuffix("]"),
                      let inode = UInt64(target.dropFirst(8).dropLast())
                else { continue }
                inodes.insert(inode)
            }
        }
        return inodes
    }

    /// The sockets of a /proc/net/tcp or tcp6 table that listen where a loopback request reaches: inode to port.
    /// A busy machine's table holds thousands of closed connections waiting out TIME_WAIT: each line's state is
    /// checked on the bytes before anything is parsed. Parsing every line made a call in a debug build take a tenth
    /// of a second, and the bridge asks for each loopback request.
    static func listeningSockets(inTable path: String) -> [UInt64: UInt16] {
        guard let table = readFile(path) else { return [:] }
        var sockets: [UInt64: UInt16] = [:]
        table.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            func endOfLine(from start: Int) -> Int {
                guard let found = memchr(base + start, 0x0A, buffer.count - start) else { return buffer.count }
                return UnsafeRawPointer(found) - UnsafeRawPointer(base)
            }
            var start = endOfLine(from: 0) + 1  // after the header
            while start < buffer.count {
                let end = endOfLine(from: start)
                if stateIsListen(base, start, end), let (port, inode) = parseListeningLine(buffer[start..<end]) {
                    sockets[inode] = port
                }
                start = end + 1
            }
        }
        return sockets
    }

    /// Whether the fourth field of the line in `start..<end`, the socket's state, is 0A (LISTEN).
    private static func stateIsListen(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        let space = UInt8(ascii: " ")
        var fields = 0
        var index = start
        while index < end {
            if base[index] != space && (index == start || base[index - 1] == space) {
                fields += 1
                if fields == 4 {
                    return index + 2 <= end && base[index] == UInt8(ascii: "0") && base[index + 1] == UInt8(ascii: "A")
                        && (index + 2 == end || base[index + 2] == space)
                }
            }
            index += 1
        }
        return false
    }

    /// A /proc/net/tcp line, `sl local_address rem_address st … uid timeout inode …`: the local port and the
    /// socket's inode when it listens (state 0A) on an address a loopback request reaches.
    static func parseListeningLine<Bytes: Collection<UInt8>>(_ line: Bytes) -> (port: UInt16, inode: UInt64)? {
        var fields: [Bytes.SubSequence] = []
        var rest = line[...]
        while fields.count < 10 {
            rest = rest.drop { $0 == UInt8(ascii: " ") }
            guard !rest.isEmpty else { return nil }
            let field = rest.prefix { $0 != UInt8(ascii: " ") }
            fields.append(field)
            rest = rest[field.endIndex...]
            if fields.count == 4 && !field.elementsEqual("0A".utf8) { return nil }
        }
        let local = fields[1].split(separator: UInt8(ascii: ":"))
        guard local.count == 2, let port = UInt16(text(local[1]), radix: 16), let inode = UInt64(text(fields[9])),
              let address = addressBytes(Substring(text(local[0]))), acceptsLoopback(address)
        else { return nil }
        return (port, inode)
    }

    private static func text<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// An address as /proc/net/tcp prints it: 32-bit words, each printed from memory as a native integer, so each
    /// word's bytes in memory are the address's bytes in network order, on either byte order.
    static func addressBytes(_ hex: Substring) -> [UInt8]? {
        guard hex.count == 8 || hex.count == 32 else { return nil }
        var bytes: [UInt8] = []
        var start = hex.startIndex
        while start < hex.endIndex {
            let end = hex.index(start, offsetBy: 8)
            guard let word = UInt32(hex[start..<end], radix: 16) else { return nil }
            withUnsafeBytes(of: word) { bytes.append(contentsOf: $0) }
            start = end
        }
        return bytes
    }

    /// A /proc file's bytes. Read to its end: /proc files report a size of 0, which Foundation's readers may trust.
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            contents.append(contentsOf: chunk[0..<count])
        }
        return contents
    }
    #endif

    #if os(macOS)
    // Unverified: written without a Mac at hand (Linux CI only). libproc is what lsof reads.

    /// The pids a libproc listing (`proc_listpgrppids`, `proc_listchildpids`) gives: it takes a buffer and its size
    /// in bytes and returns how many pids it wrote.
    static func pids(_ list: (UnsafeMutableRawPointer, Int32) -> Int32) -> [Int32] {
        var buffer = [pid_t](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { list($0.baseAddress!, Int32($0.count)) }
        return buffer.prefix(max(0, min(Int(count), buffer.count))).filter { $0 > 0 }
    }

    /// The TCP ports `pid` listens on, any address (libproc's address fields are left unread: a port bound to
    /// another address only is rare in a test, and listed here too).
    static func listening(heldBy pid: Int32) -> Set<UInt16> {
        let fdSize = MemoryLayout<proc_fdinfo>.stride
        let needed = proc_pidinfo(pid, PROC_PIDLISTFDS, 0, nil, 0)
        guard needed > 0 else { return [] }
        var fds = [proc_fdinfo](repeating: proc_fdinfo(), count: Int(needed) / fdSize + 16)
        let written = fds.withUnsafeMutableBytes {
            proc_pidinfo(pid, PROC_PIDLISTFDS, 0, $0.baseAddress, Int32($0.count))
        }
        guard written > 0 else { return [] }
        var ports = Set<UInt16>()
        for fd in fds.prefix(Int(written) / fdSize) where fd.proc_fdtype == UInt32(PROX_FDTYPE_SOCKET) {
            var info = socket_fdinfo()
            let size = Int32(MemoryLayout<socket_fdinfo>.size)
            guard proc_pidfdinfo(pid, fd.proc_fd, PROC_PIDFDSOCKETINFO, &info, size) == size,
                  info.psi.soi_kind == Int32(SOCKINFO_TCP),
                  info.psi.soi_proto.pri_tcp.tcpsi_state == Int32(TSI_S_LISTEN)
            else { continue }
            // insi_lport holds the port in network byte order, in the low 16 bits of an int.
            let port = UInt16(truncatingIfNeeded: info.psi.soi_proto.pri_tcp.tcpsi_ini.insi_lport)
            ports.insert(UInt16(bigEndian: port))
        }
        return ports
    }
    #endif
}
