// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "HTTPVCR",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "HTTPVCR", targets: ["HTTPVCR"]),
    ],
    targets: [
        .target(name: "HTTPVCR"),
        .testTarget(name: "HTTPVCRTests", dependencies: ["HTTPVCR"]),
    ],
    swiftLanguageModes: [.v6]
)
