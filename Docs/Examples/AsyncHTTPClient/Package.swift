// swift-tools-version: 6.0
// An example of its own: AsyncHTTPClient through HTTPVCR's door for clients that are not URLSession. The HTTPVCR
// package itself depends on nothing; this example depends on it (by path) and on AsyncHTTPClient.
import PackageDescription

let package = Package(
    name: "VCRAsyncHTTPClientExample",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "HTTPVCR", path: "../../.."),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(name: "VCRAsyncHTTPClient", dependencies: [
            .product(name: "HTTPVCR", package: "HTTPVCR"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        .testTarget(name: "VCRAsyncHTTPClientTests", dependencies: [
            "VCRAsyncHTTPClient",
            .product(name: "HTTPVCRTesting", package: "HTTPVCR"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            // The local server that answers with repeated fields, for the tests that run without a cassette.
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
