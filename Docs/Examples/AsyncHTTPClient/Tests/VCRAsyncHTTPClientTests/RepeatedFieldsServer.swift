import NIOCore
import NIOHTTP1
import NIOPosix

/// A server on 127.0.0.1, on a free port, that answers every request with repeated header fields: what httpbin's
/// `/response-headers` does for the cassette tests, here for the tests that run without a cassette, live (CI has no
/// httpbin).
struct RepeatedFieldsServer: Sendable {
    /// What it answers, in this order.
    static let fields: [(String, String)] = [
        ("X-Multi", "one"), ("Set-Cookie", "session=live-one; Path=/"), ("Content-Type", "text/plain"),
        ("X-Multi", "two"), ("Set-Cookie", "theme=live-two"), ("Content-Length", "2"),
    ]
    static let body = "ok"

    private let channel: any Channel

    var url: String { "http://127.0.0.1:\(channel.localAddress?.port ?? 0)/repeated-fields" }

    static func start() async throws -> RepeatedFieldsServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Answer())
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return RepeatedFieldsServer(channel: channel)
    }

    func stop() async throws {
        try await channel.close()
    }

    /// Every request, once it has ended, gets the fields and the body.
    private final class Answer: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: HTTPHeaders(RepeatedFieldsServer.fields))
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: RepeatedFieldsServer.body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
