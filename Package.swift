// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "HTTPVCR",
    // watchOS is not listed: it does not allow custom URL protocols (URLProtocol's documentation).
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16)],
    products: [
        .library(name: "HTTPVCR", targets: ["HTTPVCR"]),
        .library(name: "HTTPVCRCassettes", targets: ["HTTPVCRCassettes"]),
        .library(name: "HTTPVCRTesting", targets: ["HTTPVCRTesting"]),
        .executable(name: "vcr", targets: ["vcr"]),
        .executable(name: "vcr-bench", targets: ["vcr-bench"]),
    ],
    targets: [
        // The cassette model: tapes, file formats, JSON readers, secret scanning, drift shapes. Pure values: no
        // URLSession, no locks, no dispatch (scripts/lint-sources checks it).
        .target(name: "HTTPVCRCassettes"),
        // The runtime: interception, playback, recording, matching, filters, bridge. Re-exports HTTPVCRCassettes.
        .target(name: "HTTPVCR", dependencies: ["HTTPVCRCassettes"]),
        .target(name: "HTTPVCRTesting", dependencies: ["HTTPVCR"]),
        // The vcr subcommands that only read and write cassette files (show, diff, lint, convert, redact): they
        // build on the cassette model alone; redact is handed the recording filters by the executable.
        .target(name: "VCRFileCommands", dependencies: ["HTTPVCRCassettes"]),
        // The command: the file-only subcommands, and serve, which answers through HTTPVCR.
        .executableTarget(name: "vcr", dependencies: ["VCRFileCommands", "HTTPVCR"]),
        .executableTarget(name: "vcr-bench", dependencies: ["HTTPVCR"]),
        // The local httpbin the record tests talk to (started by scripts/test); shared by the test targets.
        .target(name: "HTTPBinTestSupport", dependencies: ["HTTPVCR"], path: "Tests/HTTPBinTestSupport"),
        // Scenarios that need a fresh process (what ran before the first VCR call); run by FreshProcessTests.
        .executableTarget(name: "vcr-scenarios", dependencies: ["HTTPVCR"], path: "Tests/VCRScenarios"),
        // The process a VCRBridge test launches: connects to the bridge and prints what its requests got.
        .executableTarget(name: "bridge-child", dependencies: ["HTTPVCR"], path: "Tests/BridgeChild"),
        // Mutants of valid cassettes of every format, shared by MalformedCassetteMutationTests and the fuzz
        // runner that scripts/fuzz-cassettes builds.
        .target(name: "CassetteMutations", dependencies: ["HTTPVCR"], path: "Tests/CassetteMutations"),
        .executableTarget(
            name: "cassette-fuzz",
            dependencies: ["HTTPVCR", "CassetteMutations"],
            path: "Tests/CassetteFuzz"
        ),
        // Helpers only tests use (the gzip encoder that makes compressed fixtures), kept out of the library.
        .target(name: "TestSupport", dependencies: ["HTTPVCR"], path: "Tests/TestSupport"),
        .testTarget(
            name: "HTTPVCRTests",
            dependencies: ["HTTPVCR", "HTTPBinTestSupport", "CassetteMutations", "TestSupport"]
        ),
        .testTarget(
            name: "HTTPVCRTestingTests",
            dependencies: ["HTTPVCRTesting", "HTTPBinTestSupport", "TestSupport"],
            // Cassettes copied into the test bundle: what BundleFallbackTests replay when the sources are out of
            // reach (as on a device or in Xcode Cloud).
            resources: [.copy("Bundled/Cassettes.bundle")]
        ),
        .testTarget(name: "VCRCommandTests", dependencies: ["HTTPVCR", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
