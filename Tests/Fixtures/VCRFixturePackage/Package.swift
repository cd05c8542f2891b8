// swift-tools-version: 6.0
import PackageDescription

// A small package that uses HTTPVCRTesting the way an app's tests would: HTTPVCRTestingTests.FixturePackageTests
// copies it to a temporary folder, points the dependency below at the HTTPVCR checkout (an absolute path), and
// runs `swift test` in the copy: once recording against httpbin, once replaying with no server, once with
// requests that are not on the cassettes (to check the failure output).
let package = Package(
    name: "VCRFixturePackage",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    dependencies: [
        .package(name: "HTTPVCR", path: "../../.."),  // HTTPVCR_PACKAGE_PATH
    ],
    targets: [
        .testTarget(
            name: "FixtureTests",
            dependencies: [.product(name: "HTTPVCRTesting", package: "HTTPVCR")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
