// swift-tools-version: 6.0
// An example of its own: a swift-openapi-runtime ClientMiddleware that sends every operation through HTTPVCR's door
// for clients that are not URLSession, whatever the transport. The HTTPVCR package itself depends on nothing.
import PackageDescription

let package = Package(
    name: "VCROpenAPIExample",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "HTTPVCR", path: "../../.."),
        .package(url: "https://github.com/apple/swift-openapi-runtime", exact: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", exact: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
    ],
    targets: [
        .target(name: "VCROpenAPI", dependencies: [
            .product(name: "HTTPVCR", package: "HTTPVCR"),
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ]),
        .testTarget(name: "VCROpenAPITests", dependencies: [
            "VCROpenAPI",
            .product(name: "HTTPVCRTesting", package: "HTTPVCR"),
            .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
